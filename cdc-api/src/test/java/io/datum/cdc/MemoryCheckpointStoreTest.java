package io.datum.cdc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class MemoryCheckpointStoreTest {

  private static CdcCheckpoint checkpoint(String slot, String watermark) {
    return CdcCheckpoint.atWatermark(slot, PgLsn.parse(watermark));
  }

  @Test
  void loadOfUnknownSlotIsEmpty() {
    MemoryCheckpointStore store = new MemoryCheckpointStore();
    assertEquals(Optional.empty(), store.load("s"));
    assertEquals(Optional.empty(), store.load("a".repeat(63)));
  }

  @Test
  void storeThenLoad() {
    MemoryCheckpointStore store = new MemoryCheckpointStore();
    CdcCheckpoint c =
        new CdcCheckpoint(
            "s",
            PgLsn.parse("0/10"),
            List.of(PartialTransaction.ofRanges(PgLsn.parse("0/20"), 3, new int[] {1, 2})));
    store.store(c);
    assertEquals(Optional.of(c), store.load("s"));
    assertEquals(Optional.empty(), store.load("other"));
  }

  @Test
  void storeOverwrites() {
    MemoryCheckpointStore store = new MemoryCheckpointStore();
    store.store(checkpoint("s", "0/10"));
    store.store(checkpoint("s", "0/20"));
    assertEquals(Optional.of(checkpoint("s", "0/20")), store.load("s"));
    // overwriting with an older watermark is the caller's business; the store keeps the last one
    store.store(checkpoint("s", "0/5"));
    assertEquals(Optional.of(checkpoint("s", "0/5")), store.load("s"));
  }

  @Test
  void slotsAreIndependent() {
    MemoryCheckpointStore store = new MemoryCheckpointStore();
    store.store(checkpoint("a", "0/10"));
    store.store(checkpoint("b", "0/20"));
    assertEquals(Optional.of(checkpoint("a", "0/10")), store.load("a"));
    assertEquals(Optional.of(checkpoint("b", "0/20")), store.load("b"));
  }

  @Test
  void badSlotIsRejected() {
    MemoryCheckpointStore store = new MemoryCheckpointStore();
    CdcConfigurationException e =
        assertThrows(CdcConfigurationException.class, () -> store.load("../x"));
    assertEquals(
        "invalid replication slot name \"../x\": PostgreSQL slot names are 1 to 63 characters"
            + " of a-z, 0-9 and _",
        e.getMessage());
    CdcConfigurationException nullSlot =
        assertThrows(CdcConfigurationException.class, () -> store.load(null));
    assertEquals(
        "invalid replication slot name null: PostgreSQL slot names are 1 to 63 characters"
            + " of a-z, 0-9 and _",
        nullSlot.getMessage());
  }

  @Test
  void storeAfterCloseThrows() {
    MemoryCheckpointStore store = new MemoryCheckpointStore();
    store.store(checkpoint("s", "0/10"));
    store.close();
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> store.store(checkpoint("s", "0/20")));
    assertEquals("memory checkpoint store is closed", e.getMessage());
    // documented: checkpoints remain readable after close
    assertEquals(Optional.of(checkpoint("s", "0/10")), store.load("s"));
  }

  @Test
  void closeIsIdempotent() {
    MemoryCheckpointStore store = new MemoryCheckpointStore();
    store.close();
    store.close();
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> store.store(checkpoint("s", "0/20")));
    assertEquals("memory checkpoint store is closed", e.getMessage());
  }

  @Test
  void locationIsMemory() {
    assertEquals("memory:", new MemoryCheckpointStore().location());
  }

  @Test
  void loadReturnsTheStoredInstance() {
    MemoryCheckpointStore store = new MemoryCheckpointStore();
    CdcCheckpoint c = checkpoint("s", "0/10");
    store.store(c);
    assertSame(c, store.load("s").orElseThrow());
  }
}
