// smla._smla: the C++ API of include/smla/ops.hpp over DLPack arrays. Destination-passing
// only: every output is an array the caller allocated (the Python layer allocates them with
// the caller's framework), so nothing here owns memory and any framework's arrays work.
// Streams are raw cudaStream_t handles (0 = the legacy default stream).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "array_views.hpp"
#include "attend_call.hpp"

#if defined(SMLA_WITH_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace smla::python {
namespace {

// Raises the Python class smla._errors chose for the status code; the message is the
// library's, which already names the argument, the expectation and what was given.
void translate_status_error(const std::exception_ptr& error, void*) {
  try {
    std::rethrow_exception(error);
  } catch (const StatusError& e) {
    nb::object cls = nb::module_::import_("smla._errors")
                         .attr("error_class")(static_cast<int>(e.status().code()));
    PyErr_SetString(cls.ptr(), e.what());
  }
}

PoolArrays pool_arrays(InArray cache, std::optional<std::string> format,
                       std::optional<InArray> scales, const char* name) {
  if (!format) throw_invalid(std::string(name) + ": a KV format is required");
  return {std::move(cache), *format, std::move(scales)};
}

int rows_d_qk(const TensorView& rows) {
  return rows.rank == 0 ? 0 : static_cast<int>(rows.shape[rows.rank - 1]);
}

// Runs a format op with the GIL released (the CPU backend is multi-threaded).
template <typename Fn>
void run_released(Fn&& fn) {
  Status status;
  {
    nb::gil_scoped_release release;
    status = fn();
  }
  throw_if_error(status);
}

void bind_attend(nb::module_& m) {
  // The key is exposed as a signed 64-bit int (same bits) so that it fits torch's `int`
  // when a plan travels through a torch custom op as (buffer, key, strategy).
  nb::class_<Plan>(m, "Plan", "A split-KV schedule made by AttendCall.make_plan (SPEC §3.2).")
      .def(
          "__init__",
          [](Plan* self, std::optional<OutArray> buffer, int64_t key, int32_t strategy) {
            Plan plan;
            plan.data = buffer_pointer(buffer, &plan.bytes, "plan buffer");
            plan.key = static_cast<uint64_t>(key);
            plan.strategy = strategy;
            new (self) Plan(plan);
          },
          "buffer"_a.none(), "key"_a, "strategy"_a)
      .def_ro("bytes", &Plan::bytes)
      .def_prop_ro("key", [](const Plan& plan) { return static_cast<int64_t>(plan.key); })
      .def_ro("strategy", &Plan::strategy);

  nb::class_<AttendCall>(m, "AttendCall",
                         "One attend over caller-allocated outputs (SPEC §1). Build it, "
                         "query workspace_size()/plan_size(), then run().")
      .def(
          "__init__",
          [](AttendCall* self, InArray q, InArray kv, std::string kv_format, InArray indices,
             float scale, OutArray out, std::optional<OutArray> lse,
             std::optional<OutArray> max_logits, std::optional<InArray> lengths,
             std::optional<InArray> kv_scales, std::optional<InArray> extra_kv,
             std::optional<std::string> extra_format, std::optional<InArray> extra_kv_scales,
             std::optional<InArray> extra_indices, std::optional<InArray> extra_lengths,
             std::optional<InArray> sink) {
            std::optional<PoolArrays> extra;
            if (extra_kv) {
              extra = pool_arrays(*extra_kv, extra_format ? extra_format : kv_format,
                                  extra_kv_scales, "extra_kv");
            }
            new (self) AttendCall(q, pool_arrays(kv, kv_format, kv_scales, "kv"), indices,
                                  scale, out, lse, max_logits, lengths, extra, extra_indices,
                                  extra_lengths, sink);
          },
          "q"_a, "kv"_a, "kv_format"_a, "indices"_a, "scale"_a, "out"_a, nb::kw_only(),
          "lse"_a = nb::none(), "max_logits"_a = nb::none(), "lengths"_a = nb::none(),
          "kv_scales"_a = nb::none(), "extra_kv"_a = nb::none(),
          "extra_format"_a = nb::none(), "extra_kv_scales"_a = nb::none(),
          "extra_indices"_a = nb::none(), "extra_lengths"_a = nb::none(),
          "sink"_a = nb::none())
      .def("workspace_size", &AttendCall::workspace_size)
      .def("plan_size", &AttendCall::plan_size)
      .def("make_plan", &AttendCall::make_plan, "buffer"_a.none(), "stream"_a = 0)
      .def("run", &AttendCall::run, "workspace"_a.none(), "plan"_a.none(), "stream"_a = 0);
}

void bind_combine(nb::module_& m) {
  m.def(
      "combine",
      [](InArray partial_out, InArray partial_lse, OutArray out, std::optional<OutArray> lse,
         std::optional<InArray> sink, uintptr_t stream) {
        CombineArgs args;
        args.partial_out = tensor_view(partial_out, "partial_out");
        args.partial_lse = tensor_view(partial_lse, "partial_lse");
        args.sink = optional_view(sink, "sink");
        args.out = tensor_view(out, "out");
        args.lse = optional_view(lse, "lse");
        run_released([&] { return smla::combine(args, to_stream(stream)); });
      },
      "partial_out"_a, "partial_lse"_a, "out"_a, nb::kw_only(), "lse"_a = nb::none(),
      "sink"_a = nb::none(), "stream"_a = 0);
}

void bind_formats(nb::module_& m) {
  m.def(
      "quantize",
      [](InArray rows, OutArray cache, std::string format, std::optional<OutArray> scales,
         uintptr_t stream) {
        const TensorView rows_view = tensor_view(rows, "rows");
        std::optional<InArray> scales_in;
        if (scales) scales_in = InArray(*scales);
        const KvPool pool =
            kv_pool(InArray(cache), format, rows_d_qk(rows_view), scales_in, "cache");
        run_released([&] { return smla::quantize(rows_view, pool, to_stream(stream)); });
      },
      "rows"_a, "cache"_a, "format"_a, nb::kw_only(), "cache_scales"_a = nb::none(),
      "stream"_a = 0);
  m.def(
      "dequantize",
      [](InArray cache, std::string format, OutArray rows, std::optional<InArray> scales,
         uintptr_t stream) {
        const TensorView rows_view = tensor_view(rows, "rows");
        const KvPool pool = kv_pool(cache, format, rows_d_qk(rows_view), scales, "cache");
        run_released([&] { return smla::dequantize(pool, rows_view, to_stream(stream)); });
      },
      "cache"_a, "format"_a, "rows"_a, nb::kw_only(), "cache_scales"_a = nb::none(),
      "stream"_a = 0);
  m.def(
      "write_cache",
      [](InArray rows, InArray slots, OutArray cache, std::string format,
         std::optional<OutArray> scales, uintptr_t stream) {
        const TensorView rows_view = tensor_view(rows, "rows");
        const TensorView slots_view = tensor_view(slots, "slots");
        std::optional<InArray> scales_in;
        if (scales) scales_in = InArray(*scales);
        const KvPool pool =
            kv_pool(InArray(cache), format, rows_d_qk(rows_view), scales_in, "cache");
        run_released([&] {
          return smla::write_cache(rows_view, slots_view, pool, to_stream(stream));
        });
      },
      "rows"_a, "slots"_a, "cache"_a, "format"_a, nb::kw_only(),
      "cache_scales"_a = nb::none(), "stream"_a = 0);
  m.def(
      "format_token_bytes",
      [](std::string format, int d_qk, bool split_scales) {
        const KvFormat parsed = parse_format_or_throw(format, "format");
        if (!format_supports_d_qk(parsed, d_qk)) {
          throw_invalid("d_qk: format " + format + " cannot hold rows of d_qk " +
                        std::to_string(d_qk));
        }
        return format_token_bytes(parsed, d_qk, split_scales);
      },
      "format"_a, "d_qk"_a, "split_scales"_a = false,
      "Bytes one token of this format occupies (SPEC §2).");
}

void bind_info(nb::module_& m) {
  m.def("version", [] { return std::string(smla::version()); });
  m.def("compiled_cuda_architectures",
        [] { return std::string(smla::compiled_cuda_architectures()); });
  m.def("kernel_preset", [] { return std::string(smla::kernel_preset()); });
  m.def("cuda_device_count", &smla::cuda_device_count);
}

// Waits on the host until `stream` of CUDA device `device` has finished its work. The
// Python layer calls it after a launch on arrays of frameworks that have no stream smla can
// order with (JAX): their allocator would otherwise reuse a workspace the kernel still
// reads, and their own work would read outputs the kernel has not written yet.
void bind_synchronize(nb::module_& m) {
  m.def(
      "synchronize_stream",
      [](uintptr_t stream, int device) {
#if defined(SMLA_WITH_CUDA)
        cudaError_t error = cudaSuccess;
        {
          nb::gil_scoped_release release;
          int previous = 0;
          error = cudaGetDevice(&previous);
          if (error == cudaSuccess && previous != device) error = cudaSetDevice(device);
          if (error == cudaSuccess) {
            error = cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream));
          }
          if (previous != device) cudaSetDevice(previous);
        }
        if (error != cudaSuccess) {
          throw StatusError(Status(StatusCode::cuda_error,
                                   std::string("stream: synchronizing failed: ") +
                                       cudaGetErrorString(error)));
        }
#else
        (void)stream;
        (void)device;  // a CPU-only build launches nothing on a stream
#endif
      },
      "stream"_a, "device"_a);
}

}  // namespace
}  // namespace smla::python

NB_MODULE(_smla, m) {
  m.doc() = "smla's C++ API over DLPack arrays; use the `smla` package, not this module.";
  nb::register_exception_translator(&smla::python::translate_status_error);
  smla::python::bind_attend(m);
  smla::python::bind_combine(m);
  smla::python::bind_formats(m);
  smla::python::bind_info(m);
  smla::python::bind_synchronize(m);
}
