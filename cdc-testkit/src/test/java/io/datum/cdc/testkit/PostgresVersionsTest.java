package io.datum.cdc.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.UniqueId;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * The smoke test on PostgreSQL 14, 15, 16, 17 and 18 ({@link VersionFixtures.Smoke}), run through
 * the JUnit launcher so that what happened across versions can be checked: every version ran, in
 * order, on a server of its own, closed before the next one, with binaries unpacked to a directory
 * of its own.
 */
@Tag("postgres")
class PostgresVersionsTest {

  /** How long each version's invocation took, start to close, by display name. */
  private static final Map<String, Long> INVOCATION_MILLIS = new ConcurrentHashMap<>();

  @BeforeEach
  void clear() {
    VersionFixtures.SEEN.clear();
    VersionFixtures.ORDER.clear();
  }

  @Test
  void smokeTestPassesOnEveryVersionEachOnItsOwnServer() {
    List<String> invocations = new CopyOnWriteArrayList<>();
    long started = System.nanoTime();
    TestExecutionSummary summary = run(VersionFixtures.Smoke.class, invocations);
    long totalMillis = (System.nanoTime() - started) / 1_000_000;

    assertEquals(0, summary.getTotalFailureCount(), () -> failures(summary));
    assertEquals(15, summary.getTestsSucceededCount(), () -> failures(summary));
    assertEquals(
        List.of(
            "PostgreSQL 14", "PostgreSQL 15", "PostgreSQL 16", "PostgreSQL 17", "PostgreSQL 18"),
        invocations);
    assertEquals(List.of(14, 15, 16, 17, 18), VersionFixtures.ORDER);

    Set<EmbeddedPostgresServer> servers = new HashSet<>();
    Set<Path> binaries = new HashSet<>();
    StringBuilder report =
        new StringBuilder("PostgreSQL versions smoke test, total " + totalMillis + " ms:\n");
    for (int version : VersionFixtures.ORDER) {
      VersionFixtures.Observation seen = VersionFixtures.SEEN.get(version);
      assertNotNull(seen.changeSeen, "no change read on " + version);
      assertTrue(seen.serverVersion.startsWith(version + "."), seen.serverVersion);
      assertTrue(servers.add(seen.server), "PostgreSQL " + version + " shares a server");
      assertTrue(
          binaries.add(seen.binaries),
          "PostgreSQL " + version + " shares binaries " + seen.binaries);
      assertTrue(
          seen.binaries
              .getFileName()
              .toString()
              .matches("postgres-.*-" + version + "-[0-9a-f]{16}"),
          seen.binaries::toString);
      // closed, its data deleted, once its invocation was done
      assertFalse(seen.server.isRunning(), seen.server::toString);
      assertFalse(
          Files.exists(seen.server.baseDirectory()),
          () -> seen.server.baseDirectory() + " still exists");
      report.append(
          String.format(
              "  PostgreSQL %-6s first start %5d ms, immediate restart %5d ms, whole invocation %5d ms, binaries %s%n",
              seen.serverVersion,
              seen.firstStartMillis,
              seen.immediateRestartMillis,
              INVOCATION_MILLIS.getOrDefault("PostgreSQL " + version, -1L),
              seen.binaries));
    }
    System.out.print(report);
  }

  @Test
  void aVersionListedTwiceIsRefusedBeforeAnyServerStarts() {
    TestExecutionSummary summary =
        run(VersionFixtures.DuplicateVersions.class, new CopyOnWriteArrayList<>());
    assertEquals(1, summary.getTotalFailureCount(), () -> failures(summary));
    Throwable failure = summary.getFailures().get(0).getException();
    assertTrue(failure.getMessage().contains("lists 16 twice"), failure::toString);
    assertEquals(0, summary.getTestsStartedCount());
  }

  @Test
  void theVersionsPropertyNarrowsWhatEachClassRunsOn() {
    String property = EmbeddedPostgresExtension.VERSIONS_PROPERTY;
    String before = System.getProperty(property);
    try {
      System.setProperty(property, "18, 16");
      List<String> invocations = new CopyOnWriteArrayList<>();
      TestExecutionSummary matrix = run(VersionFixtures.Smoke.class, invocations);
      assertEquals(0, matrix.getTotalFailureCount(), () -> failures(matrix));
      assertEquals(List.of("PostgreSQL 16", "PostgreSQL 18"), invocations, "in the class's order");

      VersionFixtures.ORDER.clear();
      TestExecutionSummary plain = run(VersionFixtures.Plain.class, new CopyOnWriteArrayList<>());
      assertEquals(0, plain.getTotalFailureCount(), () -> failures(plain));
      assertEquals(List.of(18), VersionFixtures.ORDER, "17 is not listed: the first listed");

      System.setProperty(property, "17");
      VersionFixtures.ORDER.clear();
      TestExecutionSummary kept = run(VersionFixtures.Plain.class, new CopyOnWriteArrayList<>());
      assertEquals(0, kept.getTotalFailureCount(), () -> failures(kept));
      assertEquals(List.of(17), VersionFixtures.ORDER);

      System.setProperty(property, "15");
      VersionFixtures.ORDER.clear();
      TestExecutionSummary none = run(VersionFixtures.OnlyOn17.class, new CopyOnWriteArrayList<>());
      assertEquals(0, none.getTotalFailureCount(), () -> failures(none));
      assertEquals(0, none.getTestsStartedCount());

      System.setProperty(property, "16,x");
      TestExecutionSummary bad = run(VersionFixtures.OnlyOn17.class, new CopyOnWriteArrayList<>());
      assertEquals(1, bad.getTotalFailureCount(), () -> failures(bad));
      assertTrue(
          bad.getFailures().get(0).getException().getMessage().contains("\"x\" is not"),
          () -> failures(bad));
    } finally {
      if (before == null) {
        System.clearProperty(property);
      } else {
        System.setProperty(property, before);
      }
    }
  }

  @Test
  void aVersionWithoutBinariesFailsNamingTheDependencyToAdd() {
    TestExecutionSummary summary =
        run(VersionFixtures.NoBinaries.class, new CopyOnWriteArrayList<>());
    assertEquals(1, summary.getTestsFailedCount(), () -> failures(summary));
    Throwable failure = summary.getFailures().get(0).getException();
    assertTrue(failure.getMessage().contains("no PostgreSQL 13 binaries"), failure::getMessage);
    assertTrue(
        failure.getMessage().contains("io.datum.cdc:cdc-testkit-postgres-binaries"),
        failure::getMessage);
  }

  @Test
  void aServerInBeforeAllOfAVersionsClassIsRefusedWithAnExplanation() {
    TestExecutionSummary summary =
        run(VersionFixtures.ServerInBeforeAll.class, new CopyOnWriteArrayList<>());
    assertEquals(1, summary.getTotalFailureCount(), () -> failures(summary));
    Throwable failure = summary.getFailures().get(0).getException();
    assertTrue(failure.getMessage().contains("run once for the whole class"), failure::getMessage);
    assertEquals(0, summary.getTestsSucceededCount());
  }

  private static TestExecutionSummary run(Class<?> fixture, List<String> invocations) {
    SummaryGeneratingListener summary = new SummaryGeneratingListener();
    Map<String, Long> started = new ConcurrentHashMap<>();
    TestExecutionListener invocationNames =
        new TestExecutionListener() {
          @Override
          public void executionStarted(TestIdentifier identifier) {
            started.put(identifier.getUniqueId(), System.nanoTime());
          }

          @Override
          public void executionFinished(TestIdentifier identifier, TestExecutionResult result) {
            if (UniqueId.parse(identifier.getUniqueId())
                .getLastSegment()
                .getType()
                .equals("class-template-invocation")) {
              invocations.add(identifier.getDisplayName());
              long millis = (System.nanoTime() - started.get(identifier.getUniqueId())) / 1_000_000;
              INVOCATION_MILLIS.put(identifier.getDisplayName(), millis);
            }
          }
        };
    LauncherFactory.create()
        .execute(
            LauncherDiscoveryRequestBuilder.request().selectors(selectClass(fixture)).build(),
            summary,
            invocationNames);
    return summary.getSummary();
  }

  private static String failures(TestExecutionSummary summary) {
    StringBuilder text = new StringBuilder();
    summary
        .getFailures()
        .forEach(
            f ->
                text.append(f.getTestIdentifier().getDisplayName())
                    .append(" (")
                    .append(f.getTestIdentifier().getUniqueId())
                    .append("): ")
                    .append(f.getException())
                    .append('\n'));
    return text.toString();
  }
}
