package io.datum.cdc.store.mapdb;

import static io.datum.cdc.store.mapdb.Checkpoints.checkpoint;
import static io.datum.cdc.store.mapdb.Checkpoints.entries;
import static io.datum.cdc.store.mapdb.Checkpoints.numbered;
import static io.datum.cdc.store.mapdb.Checkpoints.tx;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.CheckpointStores;
import io.datum.cdc.PgLsn;
import io.datum.cdc.store.mapdb.MapDbCheckpointStore.Options;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.mapdb.DB;
import org.mapdb.DBMaker;
import org.mapdb.Serializer;

/** Storing, loading, reopening and failing with real MapDB files. */
class MapDbCheckpointStoreTest {

  @TempDir Path dir;

  static List<Options> allOptions() {
    return List.of(
        Options.DEFAULTS,
        Options.DEFAULTS.withMemoryMapped(true),
        Options.DEFAULTS.withTransactions(false),
        new Options(false, true));
  }

  private Path file() {
    return dir.resolve("cdc.mapdb");
  }

  @ParameterizedTest
  @MethodSource("allOptions")
  void roundTripsCheckpointsAndSurvivesReopen(Options options) {
    List<CdcCheckpoint> stored =
        List.of(
            CdcCheckpoint.atWatermark("zero", PgLsn.ZERO),
            checkpoint("plain", "0/16B3748"),
            checkpoint(
                "partial",
                "0/16B3748",
                tx("0/16B37A0", 3, 1),
                tx("0/16B3800", 5, 0, 2, 3, 4),
                tx("1/0", 1, 0),
                tx("1/10", 4)),
            checkpoint("max_lsn", "FFFFFFFF/FFFFFFFF"),
            checkpoint("highest", "FFFFFFFF/FFFFFFFE", tx("FFFFFFFF/FFFFFFFF", 2, 1)),
            checkpoint("huge", "A/0", tx("A/4", Integer.MAX_VALUE, 0, 1, 1000, 1_000_000)));
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file(), options)) {
      assertEquals(options, store.options());
      assertEquals(Optional.empty(), store.load("plain"));
      stored.forEach(store::store);
      for (CdcCheckpoint c : stored) {
        assertEquals(Optional.of(c), store.load(c.slot()));
      }
    }
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file(), options)) {
      for (CdcCheckpoint c : stored) {
        assertEquals(Optional.of(c), store.load(c.slot()));
      }
      assertEquals(Set.of("zero", "plain", "partial", "max_lsn", "highest", "huge"), store.slots());
      store.store(
          checkpoint("plain", "0/1")); // an overwrite replaces, also with an older watermark
      assertEquals(Optional.of(checkpoint("plain", "0/1")), store.load("plain"));
    }
  }

  @Test
  void largeAcknowledgementSetsRoundTrip() {
    int[] alternating = new int[10_000];
    for (int i = 0; i < alternating.length; i++) {
      alternating[i] = 2 * i;
    }
    CdcCheckpoint big = checkpoint("big", "A/0", tx("A/3", 1_000_000, alternating));
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      store.store(big);
      assertEquals(Optional.of(big), store.load("big"));
    }
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      assertEquals(Optional.of(big), store.load("big"));
    }
  }

  @Test
  void thePageCacheStaysBoundedWhenMapDbGrowsTheFile() throws IOException {
    // values of 2 to 20 KB that change size on every store make MapDB's allocator grow the file
    CdcCheckpoint[] last = new CdcCheckpoint[4];
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      for (int i = 0; i < 3000 && Files.size(file()) <= 10 << 20; i++) {
        int[] acknowledged = new int[1000 + (i * 37) % 9000];
        for (int k = 0; k < acknowledged.length; k++) {
          acknowledged[k] = 2 * k;
        }
        CdcCheckpoint c =
            checkpoint(
                "slot_" + i % 4,
                "0/" + Integer.toHexString(i),
                tx("1/" + Integer.toHexString(i), 20_000, acknowledged));
        store.store(c);
        last[i % 4] = c;
        assertTrue(
            store.volume().cachedPages() <= PagedVolume.MAX_CACHED_PAGES,
            "cached pages " + store.volume().cachedPages());
      }
      assertTrue(Files.size(file()) > 10 << 20, "the file did not grow: " + Files.size(file()));
      for (CdcCheckpoint c : last) {
        assertEquals(Optional.of(c), store.load(c.slot()));
      }
    }
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      for (CdcCheckpoint c : last) {
        assertEquals(Optional.of(c), store.load(c.slot()));
      }
    }
  }

  @Test
  void manySlotsLiveInOneFile() throws IOException {
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 300; i++) {
          store.store(numbered("slot_" + i, 1000L * round + i));
        }
      }
    }
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      for (int i = 0; i < 300; i++) {
        assertEquals(Optional.of(numbered("slot_" + i, 2000L + i)), store.load("slot_" + i));
      }
      assertEquals(300, store.slots().size());
      assertEquals(Optional.empty(), store.load("slot_300"));
    }
    // one data file, its lock file, nothing per slot; the redo log is gone after a clean close
    assertEquals(Set.of("cdc.mapdb", "cdc.mapdb.lock"), entries(dir));
  }

  @Test
  void theRedoLogExistsOnlyWhileTheStoreIsOpenWithTransactions() throws IOException {
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      store.store(checkpoint("s", "0/10"));
      assertEquals(Set.of("cdc.mapdb", "cdc.mapdb.lock", "cdc.mapdb.redo"), entries(dir));
    }
    assertEquals(Set.of("cdc.mapdb", "cdc.mapdb.lock"), entries(dir));
    try (MapDbCheckpointStore store =
        MapDbCheckpointStore.open(file(), Options.DEFAULTS.withTransactions(false))) {
      store.store(checkpoint("s", "0/20"));
      assertEquals(Set.of("cdc.mapdb", "cdc.mapdb.lock"), entries(dir));
    }
  }

  @Test
  void invalidSlotNamesAreRejectedBeforeTouchingTheFile() throws IOException {
    List<String> invalid =
        Arrays.asList(
            "", "A", "../x", "a/b", "a".repeat(64), null, "a.json", "a-b", "\u00e4", "nul\u0000");
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      store.store(checkpoint("valid", "0/10"));
      for (String name : invalid) {
        assertThrows(CdcConfigurationException.class, () -> store.load(name), "load " + name);
        assertThrows(
            CdcConfigurationException.class,
            () -> store.store(CdcCheckpoint.atWatermark(name, PgLsn.of(1))));
      }
      assertThrows(NullPointerException.class, () -> store.store(null));
      assertEquals(Set.of("valid"), store.slots());
    }
    assertEquals(Set.of("cdc.mapdb", "cdc.mapdb.lock"), entries(dir));
  }

  @Test
  void closeIsIdempotentAndUseAfterCloseThrowsIllegalState() {
    MapDbCheckpointStore store = MapDbCheckpointStore.open(file());
    store.store(checkpoint("s", "0/10"));
    store.close();
    assertDoesNotThrow(store::close);
    assertThrows(IllegalStateException.class, () -> store.store(checkpoint("s", "0/20")));
    assertThrows(IllegalStateException.class, () -> store.load("s"));
    assertThrows(IllegalStateException.class, store::slots);
    try (MapDbCheckpointStore again = MapDbCheckpointStore.open(file())) {
      assertEquals(Optional.of(checkpoint("s", "0/10")), again.load("s"));
    }
  }

  @Test
  void anInterruptedThreadStillStoresAndDoesNotBreakTheStore() {
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      Thread.currentThread().interrupt();
      try {
        store.store(
            checkpoint("s", "0/10")); // leads its own batch: no waiting, uninterruptible I/O
        assertTrue(Thread.currentThread().isInterrupted(), "the interrupt status is kept");
      } finally {
        Thread.interrupted();
      }
      store.store(checkpoint("s", "0/20"));
      assertEquals(Optional.of(checkpoint("s", "0/20")), store.load("s"));
    }
  }

  @Test
  void missingParentDirectoriesAreCreated() {
    Path deep = dir.resolve("a/b/c/cdc.mapdb");
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(deep)) {
      store.store(checkpoint("s", "0/10"));
      assertEquals(deep, store.file());
    }
    assertTrue(Files.isRegularFile(deep));
  }

  @Test
  void relativePathsAndSymbolicLinksResolveToTheRealFile() throws IOException {
    Path real = dir.resolve("real/cdc.mapdb");
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(real)) {
      store.store(checkpoint("s", "0/10"));
    }
    Path link = Files.createSymbolicLink(dir.resolve("link.mapdb"), real);
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(link)) {
      assertEquals(real.toRealPath(), store.file());
      assertEquals(Optional.of(checkpoint("s", "0/10")), store.load("s"));
      // the link and the real path are the same store
      assertThrows(CdcStoreException.class, () -> MapDbCheckpointStore.open(real));
    }
  }

  @Test
  void locationIsAUriThatOpensTheSameStore() {
    String location;
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file(), new Options(false, true))) {
      location = store.location();
      store.store(checkpoint("s", "0/10"));
    }
    assertEquals("mapdb:" + file() + "?transactions=false&mmap=true", location);
    try (MapDbCheckpointStore store = (MapDbCheckpointStore) CheckpointStores.open(location)) {
      assertEquals(new Options(false, true), store.options());
      assertEquals(Optional.of(checkpoint("s", "0/10")), store.load("s"));
    }
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      assertEquals("mapdb:" + file(), store.location());
      assertTrue(store.toString().contains(file().toString()));
    }
  }

  @Test
  void aDirectoryIsNotAStoreFile() throws IOException {
    Files.createDirectories(file());
    CdcStoreException e =
        assertThrows(CdcStoreException.class, () -> MapDbCheckpointStore.open(file()));
    assertTrue(e.getMessage().contains(file() + " is a directory"), e.getMessage());
    assertThrows(CdcConfigurationException.class, () -> MapDbCheckpointStore.open(Path.of("/")));
  }

  // ------------------------------------------------------------------------------ corruption

  @Test
  void anEmptyFileIsCorruptNotANewStore() throws IOException {
    Files.createFile(file());
    assertCorruptOnOpen("the file is empty");
  }

  @Test
  void aGarbageFileIsCorrupt() throws IOException {
    byte[] junk = new byte[3 * 4096 + 17];
    Arrays.fill(junk, (byte) 0x5A);
    Files.write(file(), junk);
    assertCorruptOnOpen("MapDB cannot open it");
  }

  @Test
  void aTruncatedFileIsCorrupt() throws IOException {
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      store.store(checkpoint("s", "0/10"));
    }
    byte[] all = Files.readAllBytes(file());
    Files.write(file(), Arrays.copyOf(all, 1000));
    CdcStoreException e =
        assertThrows(
            CdcStoreException.class,
            () -> {
              try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
                store.load("s");
              }
            });
    assertTrue(e.getMessage().contains(file().toString()), e.getMessage());
  }

  @Test
  void aFileCutAfterItsHeaderIsCorruptOnOpenOrLoad() throws IOException {
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      store.store(checkpoint("s", "0/10"));
    }
    // keep MapDB's header pages, lose the page holding the checkpoint values
    try (var channel =
        java.nio.channels.FileChannel.open(file(), java.nio.file.StandardOpenOption.WRITE)) {
      channel.truncate(64 * 1024);
    }
    CdcStoreException e =
        assertThrows(
            CdcStoreException.class,
            () -> {
              try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
                store.load("s");
              }
            });
    assertTrue(e.getMessage().contains(file().toString()), e.getMessage());
  }

  @Test
  void aMapDbFileOfSomethingElseIsRefused() {
    DB db = DBMaker.fileDB(file().toFile()).make();
    db.hashMap("orders", Serializer.STRING, Serializer.STRING).create().put("1", "x");
    db.close();
    assertCorruptOnOpen("not a datum-cdc checkpoint store");
  }

  @Test
  void aCorruptValueFailsTheLoadOfItsSlotOnly() {
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      store.store(checkpoint("good", "0/10"));
      store.store(checkpoint("bad", "0/20", tx("0/30", 3, 1)));
    }
    // damage one value through MapDB itself, as bit rot inside a record would
    DB db = DBMaker.fileDB(file().toFile()).make();
    var map =
        db.hashMap(MapDbCheckpointStore.MAP_NAME, Serializer.STRING, Serializer.BYTE_ARRAY).open();
    byte[] value = map.get("bad");
    value[value.length / 2] ^= 1;
    map.put("bad", value);
    db.close();
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      CdcStoreException e = assertThrows(CdcStoreException.class, () -> store.load("bad"));
      assertTrue(e.getMessage().contains("slot \"bad\""), e.getMessage());
      assertTrue(e.getMessage().contains(file().toString()), e.getMessage());
      assertTrue(e.getMessage().contains("checksum mismatch"), e.getMessage());
      assertEquals(Optional.of(checkpoint("good", "0/10")), store.load("good"));
    }
  }

  @Test
  void aSlotMissingFromTheMapIsReportedNotLoadedAsEmpty() {
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      store.store(checkpoint("kept", "0/10"));
      store.store(checkpoint("lost", "0/20"));
      assertEquals(Set.of("kept", "lost"), store.slots());
    }
    // as if damage to MapDB's hash tree had dropped the entry
    DB db = DBMaker.fileDB(file().toFile()).make();
    db.hashMap(MapDbCheckpointStore.MAP_NAME, Serializer.STRING, Serializer.BYTE_ARRAY)
        .open()
        .remove("lost");
    db.close();
    CdcStoreException e =
        assertThrows(CdcStoreException.class, () -> MapDbCheckpointStore.open(file()));
    assertTrue(e.getMessage().contains("corrupt mapdb checkpoint store " + file()), e.getMessage());
    assertTrue(
        e.getMessage()
            .contains(
                "its list of slots names [kept, lost], but its map holds checkpoints of [kept]"),
        e.getMessage());
  }

  @Test
  void aTornRedoLogIsIgnoredAndTheLastCommitKept() throws IOException {
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      store.store(checkpoint("s", "0/10"));
    }
    byte[] junk = new byte[10_000];
    Arrays.fill(junk, (byte) 0x5A);
    Files.write(dir.resolve("cdc.mapdb.redo"), junk);
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      assertEquals(Optional.of(checkpoint("s", "0/10")), store.load("s"));
      store.store(checkpoint("s", "0/20"));
    }
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      assertEquals(Optional.of(checkpoint("s", "0/20")), store.load("s"));
    }
  }

  @Test
  void aLeftoverFromAnInterruptedCreationIsRemoved() throws IOException {
    Path leftover = dir.resolve("cdc.mapdb.1f2e3d4c5b6a7980.creating");
    Files.write(leftover, new byte[100]);
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      store.store(checkpoint("s", "0/10"));
    }
    assertFalse(Files.exists(leftover));
  }

  private void assertCorruptOnOpen(String expected) {
    CdcStoreException e =
        assertThrows(CdcStoreException.class, () -> MapDbCheckpointStore.open(file()));
    assertTrue(e.getMessage().contains(file().toString()), e.getMessage());
    assertTrue(e.getMessage().contains(expected), e.getMessage());
    // the failed open released everything: the file can be replaced and opened
    List<Throwable> none = new ArrayList<>();
    assertDoesNotThrow(() -> Files.delete(file()));
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      store.store(checkpoint("s", "0/10"));
    } catch (RuntimeException ex) {
      none.add(ex);
    }
    assertEquals(List.of(), none);
  }
}
