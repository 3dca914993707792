package io.datum.cdc.testkit;

import static io.datum.cdc.testkit.KitFixtures.at;
import static io.datum.cdc.testkit.KitFixtures.tx;
import static io.datum.cdc.testkit.internal.CheckpointStoreWriter.checkpoint;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcStoreException;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The {@code Corruption} group of {@link CheckpointStoreConformanceKit}; see its Javadoc there. */
abstract class CorruptionChecks {

  private final CheckpointStoreConformanceKit kit;

  CorruptionChecks(CheckpointStoreConformanceKit kit) {
    this.kit = kit;
  }

  @Test
  void corruptStateThrowsCdcStoreExceptionNamingThePath() throws IOException {
    kit.assumeOutlivesClose();
    List<CdcCheckpoint> stored =
        List.of(
            at("first", "0/16B3748", tx("0/16B37A0", 3, 1)),
            at("second", "5/0"),
            checkpoint("third", 77));
    CdcCheckpointStore store = kit.openStore();
    stored.forEach(store::store);
    store.close();
    kit.corrupt(kit.directory());
    String files = kit.listing();
    CdcCheckpointStore damaged;
    try {
      damaged = kit.openStore();
    } catch (CdcStoreException e) {
      kit.assertNamesDirectory(e);
      return;
    }
    int failed = 0;
    for (CdcCheckpoint c : stored) {
      try {
        assertEquals(
            Optional.of(c),
            damaged.load(c.slot()),
            "load(\""
                + c.slot()
                + "\") of corrupt state must throw CdcStoreException or return exactly what was stored");
      } catch (CdcStoreException e) {
        kit.assertNamesDirectory(e);
        failed++;
      }
    }
    assertTrue(
        failed > 0,
        "after kit.corrupt(" + kit.directory() + "), neither open nor load threw; files " + files);
  }
}
