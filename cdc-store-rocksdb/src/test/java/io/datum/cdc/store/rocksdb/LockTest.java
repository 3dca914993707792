package io.datum.cdc.store.rocksdb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.PgLsn;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * RocksDB's LOCK file against other processes, and the registry against other stores of this JVM.
 */
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
@Tag("postgres") // a child JVM: run with the integration tests
class LockTest {

  private static final String IN_USE = "is in use by another process or store: ";

  @TempDir Path dir;
  @TempDir Path nativeTmp;

  @Test
  void secondOpenInThisJvmFailsWithAClearError() throws Exception {
    try (RocksDbCheckpointStore first = RocksDbCheckpointStore.open(dir)) {
      CdcStoreException e =
          assertThrows(CdcStoreException.class, () -> RocksDbCheckpointStore.open(dir));
      assertTrue(
          e.getMessage().startsWith("rocksdb checkpoint store " + dir + " " + IN_USE),
          e.getMessage());
      // also through other spellings of the same directory
      Files.createDirectories(dir.resolve("sub"));
      assertThrows(
          CdcStoreException.class, () -> RocksDbCheckpointStore.open(dir.resolve("sub/..")));
      Path link = Files.createSymbolicLink(dir.resolveSibling(dir.getFileName() + "-link"), dir);
      try {
        CdcStoreException viaLink =
            assertThrows(CdcStoreException.class, () -> RocksDbCheckpointStore.open(link));
        assertTrue(viaLink.getMessage().contains(IN_USE), viaLink.getMessage());
      } finally {
        Files.delete(link);
      }
      first.store(CdcCheckpoint.atWatermark("s", PgLsn.of(1))); // the first is unaffected
      assertEquals(PgLsn.of(1), first.load("s").orElseThrow().watermark());
    }
    try (RocksDbCheckpointStore again = RocksDbCheckpointStore.open(dir)) {
      assertEquals(PgLsn.of(1), again.load("s").orElseThrow().watermark());
    }
  }

  @Test
  void childProcessIsLockedOutWhileThisJvmHoldsTheDatabase() throws Exception {
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
      String line = runToEnd(child("try"));
      assertTrue(
          line.startsWith("LOCKED_OUT rocksdb checkpoint store " + dir + " " + IN_USE), line);
      assertTrue(line.contains("LOCK"), line);
      store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(1))); // unaffected
    }
    assertEquals("OPENED", runToEnd(child("try")));
  }

  @Test
  void thisJvmIsLockedOutWhileAChildHoldsTheDatabase() throws Exception {
    Process holder = child("hold");
    try {
      BufferedReader out = reader(holder);
      assertEquals("HOLDING", out.readLine());
      CdcStoreException e =
          assertThrows(CdcStoreException.class, () -> RocksDbCheckpointStore.open(dir));
      assertTrue(
          e.getMessage().startsWith("rocksdb checkpoint store " + dir + " " + IN_USE),
          e.getMessage());
      holder.getOutputStream().close(); // tells the child to close its store
      assertEquals("RELEASED", out.readLine());
      assertTrue(holder.waitFor(60, TimeUnit.SECONDS));
    } finally {
      holder.destroyForcibly();
    }
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
      assertEquals(PgLsn.of(7), store.load("child").orElseThrow().watermark());
    }
  }

  @Test
  void lockOfAKilledProcessIsReleasedAndItsStoresSurvive() throws Exception {
    Process holder = child("hold");
    try {
      assertEquals("HOLDING", reader(holder).readLine());
      assertThrows(CdcStoreException.class, () -> RocksDbCheckpointStore.open(dir));
      holder.destroyForcibly(); // SIGKILL: no close
      assertTrue(holder.waitFor(60, TimeUnit.SECONDS));
    } finally {
      holder.destroyForcibly();
    }
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
      assertEquals(PgLsn.of(7), store.load("child").orElseThrow().watermark());
    }
  }

  private Process child(String mode) throws IOException {
    return LockProbe.start(mode, dir, nativeTmp);
  }

  private static BufferedReader reader(Process process) {
    return new BufferedReader(
        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
  }

  private static String runToEnd(Process process) throws Exception {
    process.getOutputStream().close();
    String line = reader(process).readLine();
    assertTrue(process.waitFor(60, TimeUnit.SECONDS), "child did not exit");
    assertEquals(0, process.exitValue());
    return line;
  }
}
