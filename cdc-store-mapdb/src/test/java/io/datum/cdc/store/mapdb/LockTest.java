package io.datum.cdc.store.mapdb;

import static io.datum.cdc.store.mapdb.Checkpoints.checkpoint;
import static io.datum.cdc.store.mapdb.Checkpoints.child;
import static io.datum.cdc.store.mapdb.Checkpoints.reader;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcStoreException;
import java.io.BufferedReader;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.io.TempDir;

/** Exclusive use of a store file: against stores of this JVM and against other processes. */
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
@Tag("postgres") // a child JVM: run with the integration tests
class LockTest {

  private static final String IN_USE = "is in use by another process or store: ";

  @TempDir Path dir;

  private Path file() {
    return dir.resolve("cdc.mapdb");
  }

  @Test
  void secondOpenInThisJvmFailsWithAClearErrorAndDisturbsNothing() {
    try (MapDbCheckpointStore first = MapDbCheckpointStore.open(file())) {
      first.store(checkpoint("s", "0/1"));
      CdcStoreException e =
          assertThrows(CdcStoreException.class, () -> MapDbCheckpointStore.open(file()));
      assertTrue(
          e.getMessage().startsWith("mapdb checkpoint store " + file() + " " + IN_USE),
          e.getMessage());
      assertTrue(
          e.getMessage().contains("process " + ProcessHandle.current().pid()), e.getMessage());
      // other spellings of the same file
      assertThrows(
          CdcStoreException.class,
          () -> MapDbCheckpointStore.open(dir.resolve("sub/../cdc.mapdb")));
      assertThrows(
          CdcStoreException.class, () -> MapDbCheckpointStore.open(dir.resolve("./cdc.mapdb")));
      first.store(checkpoint("s", "0/2"));
      assertEquals(Optional.of(checkpoint("s", "0/2")), first.load("s"));
    }
    try (MapDbCheckpointStore again = MapDbCheckpointStore.open(file())) {
      assertEquals(Optional.of(checkpoint("s", "0/2")), again.load("s"));
    }
  }

  @Test
  void childProcessIsLockedOutWhileThisJvmHoldsTheFile() throws Exception {
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      store.store(checkpoint("s", "0/1"));
      String line = runToEnd(child(LockProbe.class, "try", file().toString()));
      assertTrue(
          line.startsWith("LOCKED_OUT mapdb checkpoint store " + file() + " " + IN_USE), line);
      assertTrue(line.contains("process " + ProcessHandle.current().pid()), line);
      store.store(checkpoint("s", "0/2")); // the child's attempt did not disturb this store
    }
    assertEquals("OPENED", runToEnd(child(LockProbe.class, "try", file().toString())));
  }

  @Test
  void failedSecondOpenInThisJvmDoesNotReleaseTheOsLock() throws Exception {
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      store.store(checkpoint("s", "0/1"));
      for (int i = 0; i < 3; i++) {
        assertThrows(CdcStoreException.class, () -> MapDbCheckpointStore.open(file()));
      }
      System.gc(); // would close any descriptor a failed open leaked, releasing POSIX locks
      String line = runToEnd(child(LockProbe.class, "try", file().toString()));
      assertTrue(line.startsWith("LOCKED_OUT "), line);
    }
  }

  @Test
  void thisJvmIsLockedOutWhileAChildHoldsTheFile() throws Exception {
    Process holder = child(LockProbe.class, "hold", file().toString());
    try {
      BufferedReader out = reader(holder);
      assertEquals("HOLDING", out.readLine());
      CdcStoreException e =
          assertThrows(CdcStoreException.class, () -> MapDbCheckpointStore.open(file()));
      assertTrue(
          e.getMessage().startsWith("mapdb checkpoint store " + file() + " " + IN_USE),
          e.getMessage());
      assertTrue(e.getMessage().contains("process " + holder.pid()), e.getMessage());
      holder.getOutputStream().close(); // tells the child to close its store
      assertEquals("RELEASED", out.readLine());
      assertTrue(holder.waitFor(60, TimeUnit.SECONDS));
    } finally {
      holder.destroyForcibly();
    }
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      store.store(checkpoint("s", "0/3"));
    }
  }

  @Test
  void mapDbsOwnLockHeldByAnotherProgramIsReportedAsInUse() throws Exception {
    Process holder = child(LockProbe.class, "mapdb-hold", file().toString());
    try {
      BufferedReader out = reader(holder);
      assertEquals("HOLDING", out.readLine());
      CdcStoreException e =
          assertThrows(CdcStoreException.class, () -> MapDbCheckpointStore.open(file()));
      assertTrue(
          e.getMessage().startsWith("mapdb checkpoint store " + file() + " " + IN_USE),
          e.getMessage());
      assertTrue(e.getMessage().contains("MapDB's lock"), e.getMessage());
      assertTrue(
          e.getCause() instanceof org.mapdb.DBException.FileLocked, String.valueOf(e.getCause()));
      holder.getOutputStream().close();
      assertEquals("RELEASED", out.readLine());
      assertTrue(holder.waitFor(60, TimeUnit.SECONDS));
    } finally {
      holder.destroyForcibly();
    }
    // a MapDB file, but not a checkpoint store
    CdcStoreException e =
        assertThrows(CdcStoreException.class, () -> MapDbCheckpointStore.open(file()));
    assertTrue(e.getMessage().contains("not a datum-cdc checkpoint store"), e.getMessage());
  }

  @Test
  void theLockOfAKilledProcessIsReleasedByTheOs() throws Exception {
    Process holder = child(LockProbe.class, "hold", file().toString());
    try {
      assertEquals("HOLDING", reader(holder).readLine());
      assertThrows(CdcStoreException.class, () -> MapDbCheckpointStore.open(file()));
      holder.destroyForcibly();
      assertTrue(holder.waitFor(60, TimeUnit.SECONDS));
    } finally {
      holder.destroyForcibly();
    }
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file())) {
      assertEquals(Optional.empty(), store.load("s"));
    }
  }

  private static String runToEnd(Process process) throws Exception {
    process.getOutputStream().close();
    String line = reader(process).readLine();
    assertTrue(process.waitFor(60, TimeUnit.SECONDS), "child did not exit");
    assertEquals(0, process.exitValue());
    return line;
  }
}
