package io.datum.cdc.store.rocksdb;

import static io.datum.cdc.store.rocksdb.Checkpoints.checkpoint;
import static io.datum.cdc.store.rocksdb.Checkpoints.tx;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.store.rocksdb.RocksDbCheckpointStore.Options;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RocksDbCheckpointStoreTest {

  @TempDir Path dir;

  @Test
  void roundTripWithPartialTransactionsAndTheLargestLsn() {
    CdcCheckpoint rich = Checkpoints.rich("orders_slot");
    CdcCheckpoint max = CdcCheckpoint.atWatermark("max", PgLsn.parse("FFFFFFFF/FFFFFFFF"));
    CdcCheckpoint zero = CdcCheckpoint.atWatermark("z", PgLsn.ZERO);
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
      assertEquals(Optional.empty(), store.load("orders_slot"));
      store.store(rich);
      store.store(max);
      store.store(zero);
      assertEquals(rich, store.load("orders_slot").orElseThrow());
      assertEquals(max, store.load("max").orElseThrow());
      assertEquals(zero, store.load("z").orElseThrow());
      CdcCheckpoint loaded = store.load("orders_slot").orElseThrow();
      assertEquals(PgLsn.parse("FFFFFFFF/FFFFFFFF"), loaded.acknowledgedBeyond().get(4).txEndLsn());
      assertTrue(loaded.acknowledgedBeyond().get(4).isAcknowledged(1_000_001));
      assertEquals(Integer.MAX_VALUE, loaded.acknowledgedBeyond().get(4).eventCount());
      assertEquals(0, loaded.acknowledgedBeyond().get(2).acknowledgedCount());
    }
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
      assertEquals(rich, store.load("orders_slot").orElseThrow());
      assertEquals(max, store.load("max").orElseThrow());
      assertEquals(zero, store.load("z").orElseThrow());
    }
  }

  @Test
  void storeReplacesAndReopenSeesTheLastCheckpoint() {
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
      store.store(checkpoint("s", "0/10", tx("0/20", 3, 1)));
      store.store(checkpoint("s", "0/20"));
      store.store(checkpoint("s", "0/30", tx("0/40", 2, 0), tx("0/50", 4, 3)));
    }
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
      assertEquals(
          checkpoint("s", "0/30", tx("0/40", 2, 0), tx("0/50", 4, 3)),
          store.load("s").orElseThrow());
      store.store(checkpoint("s", "0/50"));
    }
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir, new Options(false))) {
      assertEquals(checkpoint("s", "0/50"), store.load("s").orElseThrow());
    }
  }

  @Test
  void manySlotsInOneDatabase() {
    int slots = 500;
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
      for (int i = 0; i < slots; i++) {
        store.store(
            checkpoint(
                "slot_" + i,
                PgLsn.of(i + 1).toString(),
                tx(PgLsn.of(i + 100).toString(), i + 1, i)));
      }
      assertEquals(PgLsn.of(8), store.load("slot_7").orElseThrow().watermark());
    }
    String longest = "x".repeat(63);
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
      for (int i = 0; i < slots; i++) {
        assertEquals(
            checkpoint(
                "slot_" + i,
                PgLsn.of(i + 1).toString(),
                tx(PgLsn.of(i + 100).toString(), i + 1, i)),
            store.load("slot_" + i).orElseThrow());
      }
      assertEquals(Optional.empty(), store.load("slot_" + slots));
      store.store(CdcCheckpoint.atWatermark(longest, PgLsn.of(5)));
      assertEquals(PgLsn.of(5), store.load(longest).orElseThrow().watermark());
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "Upper", "a-b", "a.b", "../x", "a/b", "slot ", "é", "\0"})
  void invalidSlotNamesAreRejectedBeforeTheDatabaseIsTouched(String slot) {
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
      CdcConfigurationException e =
          assertThrows(CdcConfigurationException.class, () -> store.load(slot));
      assertTrue(e.getMessage().contains("invalid replication slot name"), e.getMessage());
      assertThrows(CdcConfigurationException.class, () -> store.load("x".repeat(64)));
      assertThrows(CdcConfigurationException.class, () -> store.load(null));
      assertThrows(NullPointerException.class, () -> store.store(null));
    }
  }

  @Test
  void syncFalseStoresAndReloads() {
    Options fast = Options.defaults().withSyncWrites(false);
    assertFalse(fast.syncWrites());
    assertTrue(Options.defaults().syncWrites());
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir, fast)) {
      assertEquals(fast, store.options());
      store.store(Checkpoints.rich("s"));
      assertTrue(store.location().endsWith("?sync=false"), store.location());
    }
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
      assertEquals(Checkpoints.rich("s"), store.load("s").orElseThrow());
    }
  }

  @Test
  void closeIsIdempotentAndLaterUseIsRefused() {
    RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir);
    store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(1)));
    store.close();
    store.close();
    IllegalStateException onStore =
        assertThrows(
            IllegalStateException.class,
            () -> store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(2))));
    assertTrue(onStore.getMessage().contains(dir.toString()), onStore.getMessage());
    assertThrows(IllegalStateException.class, () -> store.load("s"));
    // the slot name is still validated first
    assertThrows(CdcConfigurationException.class, () -> store.load("Bad"));
    try (RocksDbCheckpointStore again = RocksDbCheckpointStore.open(dir)) {
      assertEquals(PgLsn.of(1), again.load("s").orElseThrow().watermark());
    }
  }

  @Test
  void createsMissingParentsAndRefusesAFile() throws Exception {
    Path nested = dir.resolve("a/b/c");
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(nested)) {
      store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(1)));
      assertEquals(nested, store.directory());
    }
    assertTrue(Files.isRegularFile(nested.resolve("CURRENT")));
    Path file = Files.writeString(dir.resolve("plain"), "x");
    CdcStoreException e =
        assertThrows(CdcStoreException.class, () -> RocksDbCheckpointStore.open(file));
    assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
    assertTrue(e.getMessage().contains("not a directory"), e.getMessage());
  }

  @Test
  void relativeDirectoryIsResolvedAgainstTheWorkingDirectory() {
    Path relative = Path.of("").toAbsolutePath().relativize(dir.resolve("rel"));
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(relative)) {
      assertEquals(dir.resolve("rel"), store.directory());
      store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(1)));
    }
    assertTrue(Files.isRegularFile(dir.resolve("rel/CURRENT")));
  }

  @Test
  void locationIsAReopenableUri() throws Exception {
    Path spaced = dir.resolve("with space");
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(spaced)) {
      assertEquals(
          "rocksdb:" + spaced.toString().replace(" ", "%20") + "?sync=true", store.location());
      assertTrue(store.toString().contains(spaced.toString()));
    }
  }

  @Test
  void closeReleasesTheDatabaseSoItCanBeOpenedManyTimes() {
    for (int i = 1; i <= 30; i++) {
      try (RocksDbCheckpointStore store =
          RocksDbCheckpointStore.open(dir, new Options(i % 2 == 0))) {
        if (i > 1) {
          assertEquals(PgLsn.of(i - 1), store.load("s").orElseThrow().watermark());
        }
        store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(i)));
      }
    }
    // RocksDB keeps the info log bounded
    try (Stream<Path> files = assertDoesNotThrow(() -> Files.list(dir))) {
      List<String> logs =
          files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("LOG")).toList();
      assertTrue(logs.size() <= 5, logs.toString());
    }
  }
}
