package io.datum.cdc.micrometer;

import io.datum.cdc.testkit.PackageCycles;
import org.junit.jupiter.api.Test;

/** No cycle between the packages of this module's main classes (issue #24). */
class PackageCyclesTest {

  @Test
  void noPackageCycle() {
    PackageCycles.assertNone(PgCdcSourceMetrics.class);
  }
}
