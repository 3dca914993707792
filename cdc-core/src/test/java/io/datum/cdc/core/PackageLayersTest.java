package io.datum.cdc.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.testkit.PackageCycles;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The layering docs/architecture.md draws, checked on the compiled classes: which stage of the data
 * path may use which (issue #24). The stream (`replication`) and the snapshots are two producers:
 * the replication loop drives the snapshots through {@code delivery.PeerProducer} only, and only
 * {@code SourceRuntime}, which builds a source's parts, names a class of {@code snapshot}.
 */
class PackageLayersTest {

  private static final String CORE = "io.datum.cdc.core";

  /** Each stage's packages of cdc-core it may use; {@code config} and {@code errors} are shared. */
  private static final Map<String, Set<String>> ALLOWED =
      Map.ofEntries(
          Map.entry("types", Set.of()),
          Map.entry("config", Set.of()),
          Map.entry("errors", Set.of()),
          Map.entry("server", Set.of()),
          Map.entry("feedback", Set.of()),
          Map.entry("relation", Set.of("types")),
          Map.entry("pgoutput", Set.of("relation", "types")),
          Map.entry("delivery", Set.of("types")),
          Map.entry("assembly", Set.of("pgoutput", "relation", "types", "feedback", "delivery")),
          Map.entry("snapshot", Set.of("relation", "types", "feedback", "delivery", "server")),
          Map.entry(
              "replication",
              Set.of(
                  "assembly", "pgoutput", "relation", "types", "feedback", "delivery", "server")));

  /** The one class of {@code replication} that may name the snapshots' classes. */
  private static final String BUILDS_THE_PARTS = CORE + ".replication.SourceRuntime";

  @Test
  void everyStageUsesOnlyTheStagesBelowIt() {
    List<String> violations = violations(PackageCycles.references(PgCdcSource.class));
    assertTrue(violations.isEmpty(), () -> String.join("\n", violations));
  }

  @Test
  void theCheckSeesAViolation() {
    // the check itself: the stream's loop naming a snapshot class, and a shared stage reaching up
    assertEquals(
        List.of(
            CORE + ".replication.ReplicationLoop uses " + CORE + ".snapshot.SourceSnapshots",
            CORE + ".types.PgTypeCatalog uses " + CORE + ".feedback.AckRing"),
        violations(
            Map.of(
                CORE + ".replication.ReplicationLoop",
                Set.of(CORE + ".snapshot.SourceSnapshots", CORE + ".delivery.PeerProducer"),
                CORE + ".replication.SourceRuntime",
                Set.of(CORE + ".snapshot.SourceSnapshots"),
                CORE + ".types.PgTypeCatalog",
                Set.of(CORE + ".feedback.AckRing", "io.datum.cdc.PgLsn"))));
  }

  private static List<String> violations(Map<String, Set<String>> references) {
    List<String> out = new ArrayList<>();
    new java.util.TreeMap<>(references)
        .forEach(
            (from, targets) -> {
              String fromStage = stage(from);
              Set<String> allowed = ALLOWED.get(fromStage);
              if (allowed == null) {
                return; // io.datum.cdc.core itself: the API, builds on every stage
              }
              for (String to : new java.util.TreeSet<>(targets)) {
                String toStage = stage(to);
                if (toStage == null || toStage.isEmpty() || toStage.equals(fromStage)) {
                  continue; // outside cdc-core's stages (cdc-api, the JDK, pgjdbc) or its own
                }
                boolean shared = toStage.equals("config") || toStage.equals("errors");
                boolean sharedAllowed = shared && !Set.of("config", "errors").contains(fromStage);
                boolean builder = from.equals(BUILDS_THE_PARTS) && toStage.equals("snapshot");
                if (!allowed.contains(toStage) && !sharedAllowed && !builder) {
                  out.add(from + " uses " + to);
                }
              }
            });
    return out;
  }

  /** The stage of a class of cdc-core ("" for io.datum.cdc.core itself), or null outside it. */
  private static String stage(String className) {
    if (!className.startsWith(CORE + ".")) {
      return null;
    }
    String rest = className.substring(CORE.length() + 1);
    int dot = rest.indexOf('.');
    return dot < 0 ? "" : rest.substring(0, dot);
  }
}
