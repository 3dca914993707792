package io.datum.cdc.store.file;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.spi.CheckpointCodec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What is specific to the file store's layout: one {@code <slot>.checkpoint} file per slot,
 * temporary files, the JSON files of earlier versions, a damaged file. Lifecycle, locking,
 * concurrency and crash safety are checked by {@link FileStoreConformanceTest}.
 */
class FileCheckpointStoreTest {

  private static final CdcCheckpoint AT_5 = CdcCheckpoint.atWatermark("s", PgLsn.of(5));

  @TempDir Path dir;

  @Test
  void eachSlotIsOneFileInTheSpiFormat() throws IOException {
    Path nested = dir.resolve("a/b");
    try (FileCheckpointStore store = FileCheckpointStore.open(nested)) {
      store.store(AT_5);
      assertEquals(nested, store.directory());
      assertEquals(nested.toUri().toString(), store.location());
    }
    assertEquals(Set.of(".lock", "s.checkpoint"), entries(nested));
    assertArrayEquals(
        CheckpointCodec.encode(AT_5), Files.readAllBytes(nested.resolve("s.checkpoint")));
  }

  @Test
  void aFormatOneFileOfAnEarlierVersionLoadsAndIsRewrittenInFormatTwo() throws IOException {
    // s.checkpoint as datum-cdc wrote it before format 2: watermark 0/5, event 1 of 3 of the
    // transaction at 0/9 acknowledged
    Files.write(
        dir.resolve("s.checkpoint"),
        HexFormat.of()
            .parseHex(
                "44434b5000010173"
                    + "0000000000000005"
                    + "00000001"
                    + "0000000000000009"
                    + "00000003"
                    + "00000001"
                    + "00000001"
                    + "00000002"
                    + "054a8880"));
    CdcCheckpoint expected =
        new CdcCheckpoint(
            "s",
            PgLsn.of(5),
            List.of(CdcCheckpoint.PartialTransaction.ofRanges(PgLsn.of(9), 3, new int[] {1, 2})));
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      assertEquals(Optional.of(expected), store.load("s"));
      store.store(expected);
    }
    byte[] rewritten = Files.readAllBytes(dir.resolve("s.checkpoint"));
    assertEquals(
        CheckpointCodec.FORMAT_VERSION, ((rewritten[4] & 0xFF) << 8) | (rewritten[5] & 0xFF));
  }

  @Test
  void leftoverTemporaryFilesAreIgnoredAndDeletedOnOpen() throws IOException {
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      store.store(AT_5);
      Files.writeString(dir.resolve("s.checkpoint.1a2b-1.tmp"), "half");
      assertEquals(Optional.of(AT_5), store.load("s"));
    }
    Files.writeString(dir.resolve("t.checkpoint.ff-2.tmp"), "");
    Files.writeString(dir.resolve("notes.txt"), "kept");
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      assertEquals(Set.of(".lock", "s.checkpoint", "notes.txt"), entries(dir));
      assertEquals(Optional.of(AT_5), store.load("s"));
      assertEquals(Set.of("s"), store.slots());
    }
  }

  @Test
  void aJsonFileOfAnEarlierVersionIsRefusedNamingItAndHowToMigrate() throws IOException {
    Path json = Files.writeString(dir.resolve("orders.json"), "{\"format\":1,\"slot\":\"orders\"}");
    CdcStoreException e =
        assertThrows(CdcStoreException.class, () -> FileCheckpointStore.open(dir));
    assertTrue(e.getMessage().contains(json.toString()), e.getMessage());
    assertTrue(e.getMessage().contains("To migrate"), e.getMessage());
    Files.delete(json);
    FileCheckpointStore.open(dir).close(); // the failed open released the lock
  }

  @Test
  void aDamagedOrEmptyFileIsAnErrorNamingIt() throws IOException {
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      store.store(AT_5);
    }
    Path file = dir.resolve("s.checkpoint");
    byte[] bytes = Files.readAllBytes(file);
    bytes[bytes.length - 5] ^= 1;
    for (byte[] damaged : new byte[][] {bytes, new byte[0]}) {
      Files.write(file, damaged);
      try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
        CdcStoreException e = assertThrows(CdcStoreException.class, () -> store.load("s"));
        assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
      }
    }
  }

  @Test
  void aFailedStoreNamesTheFileLeavesNoTemporaryFileAndTheStoreGoesOn() throws IOException {
    Path target = dir.resolve("s.checkpoint");
    Files.createDirectories(target.resolve("blocker")); // a non-empty directory cannot be replaced
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      CdcStoreException e = assertThrows(CdcStoreException.class, () -> store.store(AT_5));
      assertTrue(e.getMessage().contains(target.toString()), e.getMessage());
      assertEquals(Set.of(".lock", "s.checkpoint"), entries(dir));
      CdcCheckpoint other = CdcCheckpoint.atWatermark("other", PgLsn.of(2));
      store.store(other);
      assertEquals(Optional.of(other), store.load("other"));
    }
  }

  @Test
  void aPathThatIsAFileIsRefused() throws IOException {
    Path file = Files.writeString(dir.resolve("plain"), "x");
    CdcStoreException e =
        assertThrows(CdcStoreException.class, () -> FileCheckpointStore.open(file));
    assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
  }

  private static Set<String> entries(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .map(p -> p.getFileName().toString())
          .collect(Collectors.toCollection(TreeSet::new));
    }
  }
}
