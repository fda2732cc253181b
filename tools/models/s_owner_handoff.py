#!/usr/bin/env python3
"""An interleaving model of the S owner's hand-offs (src/cuda/hopper/attend_s_owner.cuh).

Each warpgroup of the CTA (producer, S owner, P·V helper) is one agent running the order of
barrier operations and shared-memory accesses its code runs, written out below step by step
from the source; a random scheduler interleaves the agents' actions one at a time. Checked,
over random items (0-5 steps, residual rounds at random, both |V| bound modes):
  - no deadlock (some agent can always move until all are done);
  - a named barrier's generation completes with one arrival from each side, never with one
    side arriving twice (which the hardware would count as both);
  - every read of the P tile, the published scores and verdict, the |V| scan words, a stage
    and the Q tile sees the version its reader expects (written for the same item, step and
    round, and not yet overwritten while an asynchronous product may still read it);
  - at the end no barrier is left half-arrived and every mbarrier phase is complete.
Run by ctest (tools.SOwnerHandoffModel), which also runs each mutation below (a protocol
with one hand-off wrong) and expects the model to fail it: the checks can fail.

Usage: s_owner_handoff.py [CASES] [SEED] [MUTATION]
  prints "ok N cases" (exit 0) or the first failure (exit 1)
"""
import random
import sys

STAGES = 2
# Mutations: each removes or moves one hand-off of the real protocol.
MUTATIONS = {
    "no-item-drain": "the owner does not wait for the helper's release of an item's last P",
    "wait-before-first": "the owner waits for P_EMPTY before an item's first P too",
    "early-p-release": "the helper releases P before its product has read it",
    "no-v-bound-wait": "the owner reads the |V| scan without waiting for V_BOUND",
}
mutation = None


class Fail(Exception):
    pass


class NamedBarrier:
    """bar.sync / bar.arrive of two warpgroups: a generation completes at two arrivals."""

    def __init__(self, name):
        self.name, self.arrived, self.generation = name, [], 0

    def arrive(self, who):
        if who in self.arrived:
            raise Fail(f"{who} arrives twice on {self.name} generation {self.generation}")
        self.arrived.append(who)
        if len(self.arrived) == 2:
            self.arrived, self.generation = [], self.generation + 1
        return self.generation  # the generation a syncing arrival waits to pass


class MBarrier:
    """An mbarrier of `count` arrivals per phase; wait(parity) passes once that phase ended."""

    def __init__(self, name, count):
        self.name, self.count, self.pending, self.phase = name, count, 0, 0

    def arrive(self):
        self.pending += 1
        if self.pending == self.count:
            self.pending, self.phase = 0, self.phase + 1

    def done(self, parity):
        # Phase k (parity k & 1) is done once self.phase > k; waits never run ahead by two.
        return self.phase % 2 != parity


def owner(sh, items):
    """SOwner: consume_item, consume_step, hand_over_p, next_step, finish."""
    step = 0
    for item, (steps, residuals) in enumerate(items):
        yield ("mwait", sh["q_full"], item & 1)
        handed_over = mutation == "wait-before-first"
        if steps > 0:
            stage = step % STAGES
            yield ("mwait", sh["full"][stage], (step // STAGES) & 1)
            yield ("read", "stage", stage, ("row", item, 0))
            yield ("read", "q", None, ("q", item))
            for i in range(steps):
                has_next = i + 1 < steps
                stage = step % STAGES
                if not has_next:
                    yield ("marrive", sh["q_empty"])
                # softmax; own product from registers: reads V of the stage (async)
                yield ("async_read", "stage", stage, ("row", item, i))
                if not sh["scale_bounds"]:
                    if mutation != "no-v-bound-wait":
                        yield ("sync", sh["V_BOUND"], "owner")
                    yield ("read", "v_max", None, ("v", item, i))
                # hand_over_p(P)
                if handed_over:
                    yield ("sync", sh["P_EMPTY"], "owner")
                handed_over = True
                yield ("write", "p", None, ("p", item, i, 0))
                yield ("write", "tops", None, ("tops", item, i))
                yield ("write", "flag", None, ("flag", item, i))
                yield ("arrive", sh["P_FULL"], "owner")
                if residuals[i]:
                    yield ("wait_async",)  # wait_pv<0>
                    yield ("sync", sh["P_EMPTY"], "owner")
                    yield ("write", "p", None, ("p", item, i, 1))
                    yield ("arrive", sh["P_FULL"], "owner")
                    yield ("async_read", "p", None, ("p", item, i, 1))  # own residual, ss
                    yield ("async_read", "stage", stage, ("row", item, i))
                # next_step
                step += 1
                if has_next:
                    nstage = step % STAGES
                    yield ("mwait", sh["full"][nstage], (step // STAGES) & 1)
                    yield ("read", "q", None, ("q", item))  # S block 0, queued behind
                    yield ("wait_async",)  # wait_pv<1>: this step's products
                    yield ("marrive", sh["empty"][stage])
                    yield ("read", "stage", nstage, ("row", item, i + 1))
                else:
                    yield ("wait_async",)
                    yield ("marrive", sh["empty"][stage])
            if mutation != "no-item-drain":
                yield ("sync", sh["P_EMPTY"], "owner")  # the item's last P was read
        else:
            yield ("marrive", sh["q_empty"])
        yield ("sync", sh["RESULTS"], "owner")
        yield ("sync", sh["RESULTS"], "owner")


def helper(sh, items):
    """PvHelper: run_item, consume_step, multiply_p, finish."""
    step = 0
    for item, (steps, residuals) in enumerate(items):
        for i in range(steps):
            stage = step % STAGES
            yield ("mwait", sh["full"][stage], (step // STAGES) & 1)
            if not sh["scale_bounds"]:
                yield ("read", "stage", stage, ("row", item, i))  # the scan
                yield ("write", "v_max", None, ("v", item, i))
                yield ("arrive", sh["V_BOUND"], "helper")
            yield ("sync", sh["P_FULL"], "helper")
            yield ("read", "tops", None, ("tops", item, i))
            yield ("read", "flag", None, ("flag", item, i))
            rounds = 2 if residuals[i] else 1
            for r in range(rounds):
                if r == 1:
                    yield ("sync", sh["P_FULL"], "helper")
                yield ("async_read", "p", None, ("p", item, i, r))
                yield ("async_read", "stage", stage, ("row", item, i))
                if mutation == "early-p-release":
                    yield ("arrive", sh["P_EMPTY"], "helper")
                    yield ("wait_async",)
                else:
                    yield ("wait_async",)
                    yield ("arrive", sh["P_EMPTY"], "helper")
            yield ("marrive", sh["empty"][stage])
            step += 1
        yield ("sync", sh["RESULTS"], "helper")
        yield ("sync", sh["RESULTS"], "helper")


def producer(sh, items):
    """Producer: load_q, produce_step."""
    step = 0
    for item, (steps, _) in enumerate(items):
        yield ("mwait", sh["q_empty"], (item & 1) ^ 1)
        yield ("write", "q", None, ("q", item))
        yield ("marrive", sh["q_full"])
        for i in range(steps):
            stage = step % STAGES
            yield ("mwait", sh["empty"][stage], ((step // STAGES) & 1) ^ 1)
            yield ("write", "stage", stage, ("row", item, i))
            yield ("marrive", sh["full"][stage])
            step += 1


def run_case(rng):
    items = []
    for _ in range(rng.randint(1, 4)):
        steps = rng.randint(0, 5)
        items.append((steps, [rng.random() < 0.4 for _ in range(steps)]))
    sh = {
        "scale_bounds": rng.random() < 0.5,
        "full": [MBarrier(f"full{s}", 1) for s in range(STAGES)],
        "empty": [MBarrier(f"empty{s}", 2) for s in range(STAGES)],
        "q_full": MBarrier("q_full", 1),
        "q_empty": MBarrier("q_empty", 1),  # the owner alone reads Q
    }
    for name in ("P_FULL", "P_EMPTY", "V_BOUND", "RESULTS"):
        sh[name] = NamedBarrier(name)
    memory = {}  # (name, index) -> version tag
    # What each agent's asynchronous products may still read, until its next wait_async.
    in_flight = {"owner": [], "helper": []}
    agents = {"producer": producer(sh, items), "owner": owner(sh, items),
              "helper": helper(sh, items)}
    blocked = {}  # agent -> the action it waits to complete
    done = set()

    def check_reads(name, index, tag, writer):
        for who, reads in in_flight.items():
            for (n, i, expected) in reads:
                if (n, i) == (name, index) and expected != tag:
                    raise Fail(f"{writer} overwrites {name}[{index}] ({expected} -> {tag}) while "
                               f"{who}'s product may still read it")

    def ready(action):
        kind = action[0]
        if kind == "mwait":
            return action[1].done(action[2])
        if kind == "sync_wait":
            return action[1].generation >= action[2]
        return True

    def step_agent(who):
        action = blocked.pop(who, None)
        if action is None:
            try:
                action = next(agents[who])
            except StopIteration:
                done.add(who)
                return
        kind = action[0]
        if not ready(action):
            blocked[who] = action
            return
        if kind == "sync":
            generation = action[1].arrive(action[2])
            pending = ("sync_wait", action[1], generation if not action[1].arrived
                       else action[1].generation + 1)
            if not ready(pending):
                blocked[who] = pending
        elif kind == "arrive":
            action[1].arrive(action[2])
        elif kind == "marrive":
            action[1].arrive()
        elif kind == "write":
            _, name, index, tag = action
            check_reads(name, index, tag, who)
            memory[(name, index)] = tag
        elif kind in ("read", "async_read"):
            _, name, index, expected = action
            got = memory.get((name, index))
            if got != expected:
                raise Fail(f"{who} reads {name}[{index}] = {got}, expected {expected}")
            if kind == "async_read":
                in_flight[who].append((name, index, expected))
        elif kind == "wait_async":
            in_flight[who].clear()

    while len(done) < 3:
        movable = [w for w in agents if w not in done and
                   (w not in blocked or ready(blocked[w]))]
        if not movable:
            raise Fail(f"deadlock: {sorted((w, blocked[w][0]) for w in blocked)} items {items}")
        step_agent(rng.choice(movable))
    for name in ("P_FULL", "P_EMPTY", "V_BOUND", "RESULTS"):
        if sh[name].arrived:
            raise Fail(f"{name} left half-arrived by {sh[name].arrived}, items {items}")
    for bar in sh["full"] + sh["empty"] + [sh["q_full"], sh["q_empty"]]:
        if bar.pending:
            raise Fail(f"mbarrier {bar.name} left with {bar.pending} arrivals, items {items}")


def main():
    global mutation
    cases = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    mutation = sys.argv[3] if len(sys.argv) > 3 else None
    if mutation is not None and mutation not in MUTATIONS:
        print(f"unknown mutation '{mutation}': one of {', '.join(MUTATIONS)}")
        return 2
    for case in range(cases):
        try:
            run_case(rng)
        except Fail as e:
            print(f"FAIL in case {case}: {e}")
            return 1
    print(f"ok {cases} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
