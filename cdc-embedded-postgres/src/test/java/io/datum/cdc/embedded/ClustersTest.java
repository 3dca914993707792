package io.datum.cdc.embedded;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which servers start from the cluster template, without starting one. */
class ClustersTest {

  @Test
  void onlyAServerWhoseFsyncIsOffStartsFromTheTemplate() {
    for (String off : new String[] {"off", "OFF", " false ", "no", "0"}) {
      assertTrue(Clusters.withoutFsync(Map.of("fsync", off)), off);
    }
    for (String on : new String[] {"on", "true", "yes", "1"}) {
      assertFalse(Clusters.withoutFsync(Map.of("fsync", on)), on);
    }
    assertFalse(Clusters.withoutFsync(Map.of()), "PostgreSQL's default, fsync on");
  }
}
