package io.datum.cdc.store.mapdb;

import static io.datum.cdc.store.mapdb.Checkpoints.child;
import static io.datum.cdc.store.mapdb.Checkpoints.numbered;
import static io.datum.cdc.store.mapdb.Checkpoints.reader;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.store.mapdb.MapDbCheckpointStore.Options;
import java.io.BufferedReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A child JVM halted at each step of a commit: with transactions the reopened store always holds
 * the new checkpoint once the redo log was durable (the interrupted commit is completed from it),
 * and the previous one before; the other slots are untouched.
 */
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
@Tag("postgres") // a child JVM: run with the integration tests
class CrashRecoveryTest {

  @TempDir Path dir;

  private Path file() {
    return dir.resolve("cdc.mapdb");
  }

  @ParameterizedTest(name = "crash at {0} {1} {2}")
  @CsvSource({
    "redo, 0, raf",
    "page, 0, raf",
    "page, 1, raf",
    "page, 2, raf",
    "sync, 0, raf",
    "redo, 0, mmap",
    "page, 1, mmap",
    "sync, 0, mmap"
  })
  void anInterruptedCommitIsCompletedFromTheRedoLog(String point, int page, String access)
      throws Exception {
    crash(true, point, page, access);
    assertTrue(Files.exists(dir.resolve("cdc.mapdb.redo")), "the crash left the redo log");
    try (MapDbCheckpointStore store =
        MapDbCheckpointStore.open(
            file(), Options.DEFAULTS.withMemoryMapped(access.equals("mmap")))) {
      assertEquals(Optional.of(numbered("a", 2)), store.load("a"));
      assertEquals(Optional.of(numbered("b", 1)), store.load("b"));
      assertEquals(Optional.of(numbered("c", 1)), store.load("c"));
      store.store(numbered("b", 3)); // and the store works on
    }
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      assertEquals(Optional.of(numbered("a", 2)), store.load("a"));
      assertEquals(Optional.of(numbered("b", 3)), store.load("b"));
    }
  }

  @Test
  void withoutTransactionsACrashInsideACommitNeverYieldsATornValue() throws Exception {
    // not crash-safe: the file may be unreadable afterwards; but never a torn or foreign value
    crash(false, "page", 1, "raf");
    try (MapDbCheckpointStore store =
        MapDbCheckpointStore.open(file(), Options.DEFAULTS.withTransactions(false))) {
      for (String slot : new String[] {"a", "b", "c"}) {
        Optional<CdcCheckpoint> c = store.load(slot);
        assertTrue(c.isPresent(), slot);
        long n = c.get().watermark().asLong();
        assertEquals(numbered(slot, n), c.get());
      }
    } catch (CdcStoreException e) {
      assertTrue(e.getMessage().contains(file().toString()), e.getMessage());
    }
  }

  private void crash(boolean transactions, String point, int page, String access) throws Exception {
    Process process =
        child(
            CrashChild.class,
            file().toString(),
            String.valueOf(transactions),
            point,
            String.valueOf(page),
            access);
    try {
      BufferedReader out = reader(process);
      assertEquals("STORED 1", out.readLine());
      assertEquals(null, out.readLine(), "the child must halt at the crash point");
      assertTrue(process.waitFor(60, TimeUnit.SECONDS));
      assertEquals(137, process.exitValue());
    } finally {
      process.destroyForcibly();
    }
  }
}
