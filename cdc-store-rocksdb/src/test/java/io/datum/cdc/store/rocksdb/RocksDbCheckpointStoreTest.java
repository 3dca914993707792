package io.datum.cdc.store.rocksdb;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.store.rocksdb.RocksDbCheckpointStore.Options;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What is specific to the RocksDB store: its options, directory handling, URI and info log.
 * Lifecycle, locking, concurrency and crash safety are checked by {@link
 * RocksDbStoreConformanceTest}, damaged files by {@link CorruptionTest}.
 */
class RocksDbCheckpointStoreTest {

  @TempDir Path dir;

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

  @Test
  void withoutCreateNothingIsWrittenIntoADirectoryThatHoldsNoStore(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    java.nio.file.Files.writeString(dir.resolve("notes.txt"), "mine");
    org.junit.jupiter.api.Assertions.assertThrows(
        io.datum.cdc.CdcStoreException.class,
        () -> RocksDbCheckpointStore.open(dir, RocksDbCheckpointStore.Options.defaults(), false));
    try (var listed = java.nio.file.Files.list(dir)) {
      org.junit.jupiter.api.Assertions.assertEquals(
          java.util.List.of("notes.txt"), listed.map(p -> p.getFileName().toString()).toList());
    }
    java.nio.file.Path store = dir.resolve("store");
    RocksDbCheckpointStore.open(store).close();
    RocksDbCheckpointStore.open(store, RocksDbCheckpointStore.Options.defaults(), false).close();
  }
}
