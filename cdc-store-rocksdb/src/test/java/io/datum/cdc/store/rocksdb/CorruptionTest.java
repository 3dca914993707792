package io.datum.cdc.store.rocksdb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.spi.CheckpointCodec;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.FlushOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * Damaged values and damaged database files are reported, never read as empty or as another
 * checkpoint.
 */
@Tag("postgres") // a child JVM: run with the integration tests
class CorruptionTest {

  @TempDir Path dir;
  @TempDir Path nativeTmp;

  @Test
  void damagedValueIsReportedNamingTheDatabaseAndTheSlot() throws Exception {
    storeSome();
    byte[] good = CheckpointCodec.encode(Checkpoints.rich("s"));
    byte[] flipped = good.clone();
    flipped[flipped.length / 2] ^= 0x10;
    rawPut("s", flipped);
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
      CdcStoreException e = assertThrows(CdcStoreException.class, () -> store.load("s"));
      assertTrue(e.getMessage().contains("slot \"s\""), e.getMessage());
      assertTrue(e.getMessage().contains(dir.toString()), e.getMessage());
      assertTrue(e.getMessage().contains("CRC32C mismatch"), e.getMessage());
      // other slots are unaffected, and storing repairs the slot
      assertEquals(PgLsn.of(2), store.load("other").orElseThrow().watermark());
      store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(9)));
      assertEquals(PgLsn.of(9), store.load("s").orElseThrow().watermark());
    }
  }

  @Test
  void garbageInCurrentFailsTheOpenNamingTheDirectory() throws Exception {
    storeSome();
    overwrite(dir.resolve("CURRENT"), b -> fill(b.length, (byte) 0x5A));
    assertOpenFailsAsCorrupt();
  }

  @Test
  void garbageInTheManifestFailsTheOpen() throws Exception {
    storeSome();
    for (Path manifest : files("MANIFEST-")) {
      overwrite(manifest, b -> fill(b.length, (byte) 0x5A));
    }
    assertOpenFailsAsCorrupt();
  }

  @Test
  void damagedTableFileFailsTheOpen() throws Exception {
    storeSome();
    flushToTableFile();
    List<Path> tables = files(".sst");
    assertEquals(1, tables.size(), tables.toString());
    overwrite(tables.get(0), b -> set(b, 10, (byte) (b[10] ^ 0x01))); // inside the first data block
    assertOpenFailsAsCorrupt();
  }

  @Test
  void garbageTableFileFailsTheOpen() throws Exception {
    storeSome();
    flushToTableFile();
    for (Path table : files(".sst")) {
      overwrite(table, b -> fill(b.length, (byte) 0x5A));
    }
    assertOpenFailsAsCorrupt();
  }

  @Test
  void damageInsideTheWriteAheadLogAfterACrashFailsTheOpen() throws Exception {
    crashAfterStoringThreeBatches();
    List<Path> logs = files(".log");
    assertEquals(1, logs.size(), logs.toString());
    overwrite(logs.get(0), b -> set(b, 20, (byte) (b[20] ^ 0x01))); // inside the first record
    assertOpenFailsAsCorrupt();
  }

  @Test
  void incompleteLastRecordOfTheLogIsAnUnacknowledgedBatchAndIsDropped() throws Exception {
    crashAfterStoringThreeBatches();
    Path log = files(".log").get(0);
    overwrite(log, b -> Arrays.copyOf(b, b.length - 3));
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
      assertEquals(Checkpoints.rich("s"), store.load("s").orElseThrow());
      assertEquals(PgLsn.of(2), store.load("other").orElseThrow().watermark());
      assertEquals(Optional.empty(), store.load("child"));
    }
  }

  @Test
  void recoveryAfterACrashMovesTheLogIntoTableFiles() throws Exception {
    crashAfterStoringThreeBatches();
    RocksDbCheckpointStore.open(dir, new RocksDbCheckpointStore.Options(false)).close();
    assertEquals(List.of(), nonEmpty(files(".log")));
    assertTrue(!files(".sst").isEmpty());
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
      assertEquals(PgLsn.of(7), store.load("child").orElseThrow().watermark());
    }
  }

  @Test
  void afterACleanCloseTheLogHoldsNothingThatCouldBeLost() throws Exception {
    storeSome();
    assertEquals(List.of(), nonEmpty(files(".log")));
    for (Path log : files(".log")) {
      Files.delete(log);
    }
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
      assertEquals(Checkpoints.rich("s"), store.load("s").orElseThrow());
    }
  }

  @Test
  void dataFilesWithoutCurrentAreNotMistakenForAnEmptyDatabase() throws Exception {
    storeSome();
    Files.delete(dir.resolve("CURRENT"));
    CdcStoreException e =
        assertThrows(CdcStoreException.class, () -> RocksDbCheckpointStore.open(dir));
    assertTrue(e.getMessage().contains(dir.toString()), e.getMessage());
    assertTrue(e.getMessage().contains("no CURRENT file"), e.getMessage());
  }

  @Test
  void everyFileOverwrittenAsTheConformanceKitDoes() throws Exception {
    storeSome();
    flushToTableFile();
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
      store.store(CdcCheckpoint.atWatermark("third", PgLsn.of(3))); // also in the log
    }
    for (Path file : files("")) {
      String name = file.getFileName().toString();
      if (!name.equals("LOCK")) {
        overwrite(file, b -> fill(b.length, (byte) 0x5A));
      }
    }
    assertOpenFailsAsCorrupt();
  }

  private void assertOpenFailsAsCorrupt() {
    CdcStoreException e =
        assertThrows(CdcStoreException.class, () -> RocksDbCheckpointStore.open(dir).close());
    assertTrue(e.getMessage().contains(dir.toString()), e.getMessage());
    assertTrue(e.getMessage().contains("corrupt"), e.getMessage());
    // the failed open released everything: still failing the same way, not "in use"
    CdcStoreException again =
        assertThrows(CdcStoreException.class, () -> RocksDbCheckpointStore.open(dir).close());
    assertTrue(!again.getMessage().contains("in use"), again.getMessage());
  }

  private void storeSome() {
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
      store.store(Checkpoints.rich("s"));
      store.store(CdcCheckpoint.atWatermark("other", PgLsn.of(2)));
    }
  }

  /**
   * Runs {@link CrashChild} {@code hold} in a child JVM and kills it: the log holds three batches.
   */
  private void crashAfterStoringThreeBatches() throws Exception {
    Process child = CrashChild.start("hold", dir, nativeTmp);
    try {
      BufferedReader out =
          new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
      assertEquals("HOLDING", out.readLine());
    } finally {
      child.destroyForcibly();
      assertTrue(child.waitFor(60, TimeUnit.SECONDS));
    }
  }

  private static List<Path> nonEmpty(List<Path> files) throws IOException {
    List<Path> result = new ArrayList<>();
    for (Path file : files) {
      if (Files.size(file) > 0) {
        result.add(file);
      }
    }
    return result;
  }

  private void rawPut(String key, byte[] value) throws RocksDBException {
    try (Options options = new Options();
        RocksDB db = RocksDB.open(options, dir.toString())) {
      db.put(key.getBytes(StandardCharsets.US_ASCII), value);
    }
  }

  private void flushToTableFile() throws RocksDBException {
    try (Options options = new Options();
        RocksDB db = RocksDB.open(options, dir.toString());
        FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
      db.flush(flush);
    }
  }

  private List<Path> files(String nameContains) throws IOException {
    try (Stream<Path> entries = Files.list(dir)) {
      return entries
          .filter(Files::isRegularFile)
          .filter(p -> p.getFileName().toString().contains(nameContains))
          .sorted()
          .collect(Collectors.toList());
    }
  }

  private static void overwrite(Path file, UnaryOperator<byte[]> change) throws IOException {
    Files.write(file, change.apply(Files.readAllBytes(file)));
  }

  private static byte[] fill(int length, byte value) {
    byte[] bytes = new byte[length];
    Arrays.fill(bytes, value);
    return bytes;
  }

  private static byte[] set(byte[] bytes, int index, byte value) {
    bytes[index] = value;
    return bytes;
  }

  /** Applies a change to the body of an encoded value and recomputes its checksum. */
}
