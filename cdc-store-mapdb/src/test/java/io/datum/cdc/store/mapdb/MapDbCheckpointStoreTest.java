package io.datum.cdc.store.mapdb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.spi.CheckpointCodec;
import io.datum.cdc.store.mapdb.MapDbCheckpointStore.Options;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mapdb.DB;
import org.mapdb.DBMaker;
import org.mapdb.Serializer;

/**
 * What is specific to the MapDB store's layout: the selector and its two data files. Lifecycle,
 * locking, concurrency and crash safety are checked by {@link MapDbStoreConformanceTest}.
 */
class MapDbCheckpointStoreTest {

  @TempDir Path dir;

  private Path file() {
    return dir.resolve("cdc.mapdb");
  }

  private static CdcCheckpoint at(long n) {
    return CdcCheckpoint.atWatermark("s", PgLsn.of(n));
  }

  @Test
  void batchesGoToTheTwoDataFilesInTurnAndEachHoldsACompleteState() throws IOException {
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      assertEquals(Set.of("cdc.mapdb", "cdc.mapdb.lock"), entries());
      store.store(at(1));
      store.store(CdcCheckpoint.atWatermark("t", PgLsn.of(7)));
      store.store(at(3));
      assertEquals(Set.of("cdc.mapdb", "cdc.mapdb.0", "cdc.mapdb.1", "cdc.mapdb.lock"), entries());
    }
    // the current file (generation 3, cdc.mapdb.1) and the other one (generation 2) are whole
    assertEquals(List.of(3L, 7L), watermarks(dir.resolve("cdc.mapdb.1")));
    assertEquals(List.of(1L, 7L), watermarks(dir.resolve("cdc.mapdb.0")));
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      assertEquals(Optional.of(at(3)), store.load("s"));
      assertEquals(Set.of("s", "t"), store.slots());
    }
  }

  @Test
  void aTornSelectorRecordFallsBackToTheOtherAndDamageToBothIsAnError() throws IOException {
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      store.store(at(1)); // generation 1, record 1
      store.store(at(2)); // generation 2, record 0
    }
    overwrite(file(), 4, (byte) 0x5A); // record 0: generation 2 no longer matches its CRC32C
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      assertEquals(Optional.of(at(1)), store.load("s"), "generation 1's file, written before");
      store.store(at(5));
    }
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      assertEquals(Optional.of(at(5)), store.load("s"));
    }
    overwrite(file(), 4, (byte) 0x5A);
    overwrite(file(), 512 + 4, (byte) 0x5A);
    assertCorruptOnOpen("neither selector record is valid");
  }

  @Test
  void aMissingOrDamagedCurrentDataFileIsAnErrorNamingIt() throws IOException {
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      store.store(at(1));
    }
    Path current = dir.resolve("cdc.mapdb.1");
    byte[] bytes = Files.readAllBytes(current);
    Files.write(current, new byte[bytes.length]);
    assertCorruptOnOpen(current.toString());
    Files.delete(current);
    assertCorruptOnOpen(current + " is missing");
  }

  @Test
  void aFileThatIsNoSelectorIsRefused() throws IOException {
    DB other = DBMaker.fileDB(file().toFile()).make(); // a MapDB file, as earlier versions wrote
    other.close();
    assertCorruptOnOpen("is not the selector of a datum-cdc MapDB store");
    Files.write(file(), new byte[0]);
    assertCorruptOnOpen("(0 of 1024 bytes)");
  }

  @Test
  void withoutTransactionsTheCurrentFileIsWrittenInPlace() throws IOException {
    Options inPlace = Options.DEFAULTS.withTransactions(false);
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file(), inPlace)) {
      store.store(at(1));
      store.store(at(2));
      assertEquals(Set.of("cdc.mapdb", "cdc.mapdb.0", "cdc.mapdb.lock"), entries());
      assertTrue(store.location().endsWith("cdc.mapdb?transactions=false"), store.location());
    }
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      assertEquals(Optional.of(at(2)), store.load("s"));
      store.store(at(3)); // and on with the default: into the other file
    }
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file(), inPlace)) {
      assertEquals(Optional.of(at(3)), store.load("s"));
    }
  }

  private void assertCorruptOnOpen(String expected) {
    CdcStoreException e =
        assertThrows(CdcStoreException.class, () -> MapDbCheckpointStore.open(file()).close());
    assertTrue(
        e.getMessage().contains(file().toString()) && e.getMessage().contains(expected),
        e.getMessage());
  }

  private static List<Long> watermarks(Path dataFile) {
    DB db = DBMaker.fileDB(dataFile.toFile()).readOnly().make();
    try {
      var map =
          db.hashMap(MapDbCheckpointStore.MAP_NAME, Serializer.STRING, Serializer.BYTE_ARRAY)
              .open();
      return new TreeSet<>(map.keySet())
          .stream()
              .map(slot -> CheckpointCodec.decode(map.get(slot), slot, "test").watermark().asLong())
              .toList();
    } finally {
      db.close();
    }
  }

  private static void overwrite(Path file, long at, byte value) throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
      channel.write(ByteBuffer.wrap(new byte[] {value}), at);
    }
  }

  private Set<String> entries() throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .map(p -> p.getFileName().toString())
          .collect(Collectors.toCollection(TreeSet::new));
    }
  }

  @Test
  void withoutCreateNothingIsWrittenBesideAFileThatIsNoStore(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    java.nio.file.Path notes = dir.resolve("notes.txt");
    java.nio.file.Files.writeString(notes, "mine");
    org.junit.jupiter.api.Assertions.assertThrows(
        io.datum.cdc.CdcStoreException.class,
        () -> MapDbCheckpointStore.open(notes, MapDbCheckpointStore.Options.DEFAULTS, false));
    try (var listed = java.nio.file.Files.list(dir)) {
      org.junit.jupiter.api.Assertions.assertEquals(
          java.util.List.of("notes.txt"), listed.map(p -> p.getFileName().toString()).toList());
    }
    java.nio.file.Path store = dir.resolve("cdc.mapdb");
    MapDbCheckpointStore.open(store, MapDbCheckpointStore.Options.DEFAULTS).close();
    MapDbCheckpointStore.open(store, MapDbCheckpointStore.Options.DEFAULTS, false).close();
  }
}
