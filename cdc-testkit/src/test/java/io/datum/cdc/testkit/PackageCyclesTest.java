package io.datum.cdc.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcException;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.cyclea.CycleA;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * No cycle between the packages of cdc-api, cdc-embedded-postgres and cdc-testkit (modules without
 * a test of their own for it), and the check finds a cycle planted in the test classes.
 */
class PackageCyclesTest {

  @Test
  void noPackageCycle() {
    PackageCycles.assertNone(EmbeddedPostgresServer.class);
    PackageCycles.assertNone(PackageCycles.class);
  }

  /**
   * cdc-api (which cannot depend on the testkit to check itself): its root package holds positions,
   * checkpoints, tables and the store contract, {@code event} the events and their handler, {@code
   * spi} what store implementations share; each depends only on the root.
   */
  @Test
  void cdcApiHasNoPackageCycle() {
    PackageCycles.assertNone(CdcException.class);
  }

  @Test
  void aPlantedCycleIsFoundAndNamed() throws Exception {
    Path testClasses =
        Path.of(CycleA.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    List<String> cycles = PackageCycles.cycles(testClasses);
    assertEquals(1, cycles.size(), String.valueOf(cycles));
    String cycle = cycles.get(0);
    assertTrue(
        cycle.startsWith("io.datum.cdc.testkit.cyclea <-> io.datum.cdc.testkit.cycleb:"), cycle);
    assertTrue(
        cycle.contains(
            "io.datum.cdc.testkit.cyclea -> io.datum.cdc.testkit.cycleb"
                + " (io.datum.cdc.testkit.cyclea.CycleA uses io.datum.cdc.testkit.cycleb.CycleB)"),
        cycle);
  }
}
