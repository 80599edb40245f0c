// The client presets (conformance/client_presets.h): names and versions resolve to the run
// script with the placeholders; unknown ones are refused with the known ones listed.
#include "conformance/client_presets.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"

namespace permitcheck::conformance {
namespace {

TEST(ClientPresets, DefaultVersionRunsTheRunScriptWithEveryPlaceholder) {
  absl::StatusOr<ResolvedPreset> p = resolve_preset("cpp", "/src");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->command,
            "'/src/clients/cpp/run' {url} {topic} {subscription} {q} {delay_ms} "
            "{nack_every}");
  EXPECT_EQ(p->version, "3.13.0");
  EXPECT_FALSE(p->preset->knows_message_permits);
  EXPECT_EQ(p->preset->threshold(10), 5);
}

TEST(ClientPresets, AnotherInstalledVersionIsChosenThroughTheEnvironment) {
  absl::StatusOr<ResolvedPreset> p = resolve_preset("go@v0.9.0", "/src");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->command.rfind("PERMITCHECK_CLIENT_VERSION=v0.9.0 '/src/clients/go/run'", 0),
            0u) << p->command;
  // Naming the default version is the default.
  absl::StatusOr<ResolvedPreset> d = resolve_preset("go@v0.21.0", "/src");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->command.find("PERMITCHECK_CLIENT_VERSION"), std::string::npos);
}

TEST(ClientPresets, JavaReleasesAreChosenThroughTheEnvironmentLikeGo) {
  absl::StatusOr<ResolvedPreset> p = resolve_preset("java@3.2.0", "/src");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->command.rfind("PERMITCHECK_CLIENT_VERSION=3.2.0 '/src/clients/java/run'", 0),
            0u) << p->command;
  EXPECT_EQ(resolve_preset("java", "/src")->version, "4.2.4");
  EXPECT_EQ(resolve_preset("java@4.2.4", "/src")->command.find("PERMITCHECK_CLIENT_VERSION"),
            std::string::npos);
  EXPECT_FALSE(resolve_preset("java@2.2.1", "/src").ok());
}

// The java run script picks the build of the release PERMITCHECK_CLIENT_VERSION names: one
// that is not built is refused (exit 2) naming its target-VERSION/ jar, before any JVM starts.
TEST(ClientPresets, JavaRunScriptHonoursTheClientVersion) {
  // absl::StrCat, not std::string +: GCC 12 warns falsely (-Warray-bounds) on string + literal
  // once the libstdc++ headers come through the precompiled header (docs/build-times.md).
  const std::string cmd = absl::StrCat("PERMITCHECK_CLIENT_VERSION=0.0.0-none '",
                                       PERMITCHECK_SOURCE_DIR,
                                       "/clients/java/run' u t s 10 0 0 2>&1");
  FILE* f = popen(cmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, f) != nullptr) out += buf;
  const int status = pclose(f);
  EXPECT_EQ(WEXITSTATUS(status), 2) << out;
  EXPECT_NE(out.find("target-0.0.0-none/consumer.jar is missing"), std::string::npos) << out;
}

TEST(ClientPresets, UnknownNamesAndVersionsAreRefusedWithTheKnownOnes) {
  absl::StatusOr<ResolvedPreset> n = resolve_preset("erlang", "/src");
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("java, cpp, go, pulsar-flex, reference, rust"), std::string::npos)
      << n.status();
  absl::StatusOr<ResolvedPreset> v = resolve_preset("go@v0.1.0", "/src");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("v0.21.0, v0.9.0, v0.10.0, v0.12.0, v0.12.1, v0.16.0, v0.17.0"),
            std::string::npos)
      << v.status();
}

TEST(ClientPresets, ThresholdsFollowEachClientsSource) {
  for (const ClientPreset& p : all_client_presets()) {
    EXPECT_FALSE(p.threshold_source.empty()) << p.name;
    EXPECT_GE(p.threshold(1), 1) << p.name;
  }
  EXPECT_EQ(resolve_preset("pulsar-flex", "/")->preset->threshold(10), 6);
  EXPECT_TRUE(resolve_preset("reference", "/")->preset->knows_message_permits);
}

}  // namespace
}  // namespace permitcheck::conformance
