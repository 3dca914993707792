package io.datum.cdc.benchmarks.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.datum.cdc.benchmarks.e2e.Workload;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Connect benchmark on a tiny workload (B at scale 0.001: 100 transactions, 550 inserts): every
 * setup, including the worker's replacement between the two exactly-once modes, delivers every
 * change, and nothing more.
 */
@EmbeddedPostgresTest
class ConnectHarnessSmokeTest {

  @Test
  void everySetupDeliversEveryChangeOfATinyWorkload(EmbeddedPostgresServer pg) throws Exception {
    List<Setup> order = ConnectHarness.order(List.of(Setup.values()), 1, 0);
    assertEquals(Setup.values().length, order.size());
    List<Map<String, Object>> results;
    try (ConnectHarness h = ConnectHarness.start(pg)) {
      results = h.measure(Workload.B, 0.001, order, "smoke", 120);
    }
    assertEquals(order.size(), results.size());
    for (Map<String, Object> r : results) {
      assertFalse(r.containsKey("error"), () -> r.toString());
      assertEquals(550L, r.get("expectedEvents"), r::toString);
      assertEquals(550L, r.get("events"), r::toString);
      long end = ((Number) r.get("topicEndOffset")).longValue();
      if (Setup.of((String) r.get("setup")).exactlyOnce) {
        // data and one commit marker per transaction (100 for datum-cdc, at least one for Debezium)
        assertFalse(end <= 550, r::toString);
      } else {
        assertEquals(550L, end, r::toString);
      }
    }
  }
}
