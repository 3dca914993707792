package io.datum.cdc.store.file;

import static io.datum.cdc.store.file.Checkpoints.checkpoint;
import static io.datum.cdc.store.file.Checkpoints.entries;
import static io.datum.cdc.store.file.Checkpoints.tx;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.PgLsn;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class FileCheckpointStoreTest {

  @TempDir Path dir;

  @Test
  void roundTripsWatermarkAndPartialTransactions() {
    CdcCheckpoint stored =
        checkpoint(
            "orders_slot",
            "0/16B3748",
            tx("0/16B3800", 5, 0, 1, 2, 4),
            tx("1/0", 1),
            tx("FFFFFFFF/FFFFFFFF", 70, 3, 64, 65, 69));
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      store.store(stored);
      assertEquals(Optional.of(stored), store.load("orders_slot"));
    }
  }

  @Test
  void writesTheDocumentedJsonFormat() throws IOException {
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      store.store(checkpoint("s", "0/16B3748", tx("0/16B3800", 5, 0, 1, 2, 4)));
    }
    assertEquals(
        "{\"format\":1,\"slot\":\"s\",\"watermark\":\"0/16B3748\",\"acknowledged_beyond\":"
            + "[{\"tx_end_lsn\":\"0/16B3800\",\"event_count\":5,\"acknowledged\":[[0,2],[4,4]]}]}\n",
        Files.readString(dir.resolve("s.json")));
  }

  @Test
  void overwriteReplacesThePreviousCheckpoint() {
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      store.store(checkpoint("s", "0/10", tx("0/20", 3, 1)));
      CdcCheckpoint second = CdcCheckpoint.atWatermark("s", PgLsn.parse("0/30"));
      store.store(second);
      assertEquals(Optional.of(second), store.load("s"));
    }
  }

  @Test
  void keepsManySlotsApartInOneDirectory() throws IOException {
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      for (int i = 0; i < 20; i++) {
        store.store(CdcCheckpoint.atWatermark("slot_" + i, PgLsn.of(1000 + i)));
      }
      for (int i = 0; i < 20; i++) {
        assertEquals(PgLsn.of(1000 + i), store.load("slot_" + i).orElseThrow().watermark());
      }
    }
    assertEquals(21, entries(dir).size()); // 20 slots and .lock, nothing else
    assertTrue(entries(dir).contains("slot_7.json"));
  }

  @Test
  void unknownSlotIsEmpty() {
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      assertEquals(Optional.empty(), store.load("never_stored"));
    }
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "../x",
        "A",
        "",
        "a/b",
        "a.json",
        "x..",
        "slot-1",
        " s",
        "é",
        ".lock",
        "a234567890123456789012345678901234567890123456789012345678901234"
      })
  void rejectsInvalidSlotNamesWithoutTouchingFiles(String slot) throws IOException {
    Path storeDir = dir.resolve("store");
    try (FileCheckpointStore store = FileCheckpointStore.open(storeDir)) {
      CdcConfigurationException e =
          assertThrows(CdcConfigurationException.class, () -> store.load(slot));
      assertTrue(e.getMessage().contains('"' + slot + '"'), e.getMessage());
      assertEquals(Set.of(".lock"), entries(storeDir));
      assertEquals(Set.of("store"), entries(dir)); // "../x" did not escape either
    }
  }

  @Test
  void rejectsNullSlot() {
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      assertThrows(CdcConfigurationException.class, () -> store.load(null));
      assertThrows(NullPointerException.class, () -> store.store(null));
    }
  }

  @Test
  void acceptsTheLongestValidSlotName() {
    String slot = "a".repeat(63);
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      store.store(CdcCheckpoint.atWatermark(slot, PgLsn.of(7)));
      assertEquals(PgLsn.of(7), store.load(slot).orElseThrow().watermark());
    }
  }

  @Test
  void reopenAfterCloseSeesTheData() {
    CdcCheckpoint stored = checkpoint("s", "0/10", tx("0/20", 2, 1));
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      store.store(stored);
    }
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      assertEquals(Optional.of(stored), store.load("s"));
    }
  }

  @Test
  void closeIsIdempotentAndStoreAfterCloseFails() {
    FileCheckpointStore store = FileCheckpointStore.open(dir);
    store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(1)));
    store.close();
    store.close();
    assertThrows(
        IllegalStateException.class,
        () -> store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(2))));
    assertEquals(PgLsn.of(1), store.load("s").orElseThrow().watermark());
  }

  @Test
  void createsAMissingDirectoryWithParents() {
    Path nested = dir.resolve("a/b/c");
    try (FileCheckpointStore store = FileCheckpointStore.open(nested)) {
      store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(1)));
      assertEquals(nested, store.directory());
    }
    assertTrue(Files.isRegularFile(nested.resolve("s.json")));
  }

  @Test
  void refusesAPathThatIsAFile() throws IOException {
    Path file = Files.writeString(dir.resolve("plain"), "x");
    CdcStoreException e =
        assertThrows(CdcStoreException.class, () -> FileCheckpointStore.open(file));
    assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
  }

  @Test
  void crashLeftoverTempFilesAreIgnoredAndCleanedOnOpen() throws IOException {
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(5)));
    }
    Files.writeString(dir.resolve("s.json.1a2b-1.tmp"), "{\"format\":1,\"slot\":\"s\",\"wat");
    Files.writeString(dir.resolve("t.json.ff-2.tmp"), "");
    Files.writeString(dir.resolve("notes.txt"), "kept");
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      assertEquals(Set.of(".lock", "s.json", "notes.txt"), entries(dir));
      assertEquals(PgLsn.of(5), store.load("s").orElseThrow().watermark());
      assertEquals(Optional.empty(), store.load("t"));
    }
  }

  @Test
  void aTempFileWrittenWhileOpenDoesNotBreakLoad() throws IOException {
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      Files.write(dir.resolve("s.json.0-1.tmp"), "garbage".getBytes(StandardCharsets.UTF_8));
      assertEquals(Optional.empty(), store.load("s"));
      store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(9)));
      assertEquals(PgLsn.of(9), store.load("s").orElseThrow().watermark());
    }
  }

  @Test
  void failedStoreNamesTheFileAndLeavesNoTempFile() throws IOException {
    Path target = dir.resolve("s.json");
    Files.createDirectories(target.resolve("blocker")); // a non-empty directory cannot be replaced
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      CdcStoreException e =
          assertThrows(
              CdcStoreException.class,
              () -> store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(1))));
      assertTrue(e.getMessage().contains(target.toString()), e.getMessage());
      assertEquals(Set.of(".lock", "s.json"), entries(dir));
      store.store(CdcCheckpoint.atWatermark("other", PgLsn.of(2))); // the store still works
    }
  }

  @Test
  void locationIsTheDirectoryUri() {
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      assertEquals(dir.toUri().toString(), store.location());
    }
  }
}
