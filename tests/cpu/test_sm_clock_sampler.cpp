// The SM clock sampler of `smla bench` (tools/smla/sm_clock_sampler.cpp) on a stand-in NVML
// (tests/fakes/fake_nvml.cpp) and without one: what it reads, and that it says why it cannot.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>

#include "sm_clock_sampler.hpp"

namespace smla::cli {
namespace {

constexpr const char* kFakeBusId = "0000:01:00.0";

TEST(SmClockSampler, ReadsTheClockAndItsReasonsWhileRunning) {
  SmClockSampler sampler(kFakeBusId, SMLA_FAKE_NVML_PATH);
  ASSERT_TRUE(sampler.available()) << sampler.why_unavailable();
  EXPECT_EQ(sampler.why_unavailable(), "");
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const SmClockStats stats = sampler.stop();
  // The stand-in alternates 1500 and 1980 MHz, and reports SwPowerCap with 1500.
  ASSERT_GE(stats.samples, 2);
  EXPECT_EQ(stats.min_mhz, 1500u);
  EXPECT_EQ(stats.max_mhz, 1980u);
  EXPECT_GT(stats.mean_mhz, 1500.0);
  EXPECT_LT(stats.mean_mhz, 1980.0);
  EXPECT_EQ(stats.reasons, 0x4ull);
  // The stand-in's energy counter changes every 5 ms by 350 W's worth: ~20 updates in the
  // span, whose mean power is taken between the first and the last of them. Each is seen up to
  // a poll late (more on a loaded machine), hence the margin.
  EXPECT_GE(stats.span_s, 0.100);
  ASSERT_TRUE(stats.energy_read);
  ASSERT_TRUE(stats.energy_measured()) << stats.energy_updates << " updates";
  EXPECT_GE(stats.energy_updates, 5);
  EXPECT_LE(stats.energy_window_s, stats.span_s);
  EXPECT_EQ(stats.energy_window_mj % 1750, 0u) << "a whole number of the counter's steps";
  EXPECT_NEAR(stats.mean_watts(), 350.0, 70.0);
  // Its instant power field alternates 300 and 400 W at the same refreshes: the polls' mean
  // lies between the two, and their changes count the refreshes seen.
  ASSERT_TRUE(stats.power_measured());
  EXPECT_EQ(stats.power_readings, stats.samples);
  EXPECT_GE(stats.power_changes, 5);
  EXPECT_LT(stats.power_changes, stats.power_readings);
  EXPECT_GT(stats.power_mean_w, 300.0);
  EXPECT_LT(stats.power_mean_w, 400.0);
}

// A driver without the instant power field (the stand-in told so): the clock and the energy
// are sampled as before, the power is not, and nothing is made up for it.
TEST(SmClockSampler, ADeviceWithoutTheInstantPowerFieldHasNoPower) {
  ASSERT_EQ(setenv("SMLA_FAKE_NVML_NO_POWER_FIELD", "1", 1), 0);
  SmClockSampler sampler(kFakeBusId, SMLA_FAKE_NVML_PATH);
  ASSERT_TRUE(sampler.available()) << sampler.why_unavailable();
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const SmClockStats stats = sampler.stop();
  unsetenv("SMLA_FAKE_NVML_NO_POWER_FIELD");
  EXPECT_TRUE(stats.measured());
  EXPECT_TRUE(stats.energy_read);
  EXPECT_FALSE(stats.power_measured());
  EXPECT_EQ(stats.power_readings, 0);
  EXPECT_EQ(stats.power_mean_w, 0.0);
}

// A span of fewer than two of the counter's updates, or of updates too close together, has
// no mean power: the counter's value at the span's two ends would give one from the driver's
// update times, not the span's (here 0 W or 1750 mJ over a millisecond).
TEST(SmClockSampler, ASpanOfTooFewCounterUpdatesHasNoEnergy) {
  SmClockSampler sampler(kFakeBusId, SMLA_FAKE_NVML_PATH);
  ASSERT_TRUE(sampler.available());
  sampler.start();
  const SmClockStats stats = sampler.stop();
  EXPECT_TRUE(stats.energy_read);
  EXPECT_FALSE(stats.energy_measured()) << stats.energy_updates << " updates over "
                                        << stats.energy_window_s << " s";
  EXPECT_TRUE(std::isnan(stats.mean_watts()));
}

TEST(SmClockSampler, EachSpanStartsAfresh) {
  SmClockSampler sampler(kFakeBusId, SMLA_FAKE_NVML_PATH);
  ASSERT_TRUE(sampler.available());
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const int first = sampler.stop().samples;
  // A span however short has one sample; what the first span saw is not carried over (the
  // long first span leaves room for a loaded machine's slower sleeps).
  sampler.start();
  const SmClockStats second = sampler.stop();
  EXPECT_GE(first, 5);
  EXPECT_GE(second.samples, 1);
  EXPECT_LT(second.samples, first);
  // Without a running span there is nothing to stop.
  EXPECT_FALSE(sampler.stop().measured());
}

TEST(SmClockSampler, UnavailableWithoutTheLibraryOrTheDevice) {
  SmClockSampler no_library(kFakeBusId, "libsmla-no-such-nvml.so");
  EXPECT_FALSE(no_library.available());
  EXPECT_EQ(no_library.why_unavailable(), "cannot load libsmla-no-such-nvml.so");
  no_library.start();  // samples nothing, and says so
  const SmClockStats none = no_library.stop();
  EXPECT_FALSE(none.measured());
  EXPECT_FALSE(none.energy_read);
  EXPECT_FALSE(none.energy_measured());
  EXPECT_TRUE(std::isnan(none.mean_watts()));
  EXPECT_FALSE(none.power_measured());

  SmClockSampler other_device("0000:02:00.0", SMLA_FAKE_NVML_PATH);
  EXPECT_FALSE(other_device.available());
  EXPECT_NE(other_device.why_unavailable().find("0000:02:00.0"), std::string::npos)
      << other_device.why_unavailable();
}

TEST(SmClockSampler, NamesTheReasonBits) {
  EXPECT_EQ(clock_event_reason_names(0), "none");
  EXPECT_EQ(clock_event_reason_names(0x4), "SwPowerCap");
  EXPECT_EQ(clock_event_reason_names(0x4 | 0x1 | 0x40), "Idle,SwPowerCap,HwThermal");
  EXPECT_EQ(clock_event_reason_names(0x8 | 0x10000), "HwSlowdown,0x10000");
}

}  // namespace
}  // namespace smla::cli
