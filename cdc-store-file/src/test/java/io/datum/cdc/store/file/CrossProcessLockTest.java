package io.datum.cdc.store.file;

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
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.io.TempDir;

/** The directory lock against other processes, and against other stores of this JVM. */
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
@Tag("postgres") // a child JVM: run with the integration tests
class CrossProcessLockTest {

  @TempDir Path dir;

  @Test
  void secondStoreInThisJvmIsRefusedWithAClearError() {
    try (FileCheckpointStore first = FileCheckpointStore.open(dir)) {
      CdcStoreException e =
          assertThrows(CdcStoreException.class, () -> FileCheckpointStore.open(dir));
      assertTrue(e.getMessage().contains("checkpoint directory " + dir), e.getMessage());
      assertTrue(e.getMessage().contains("in use by another process"), e.getMessage());
      // also through another spelling of the same directory
      assertThrows(CdcStoreException.class, () -> FileCheckpointStore.open(dir.resolve("sub/..")));
      first.store(CdcCheckpoint.atWatermark("s", PgLsn.of(1))); // the first is unaffected
    }
    try (FileCheckpointStore again = FileCheckpointStore.open(dir)) {
      assertEquals(PgLsn.of(1), again.load("s").orElseThrow().watermark());
    }
  }

  @Test
  void childProcessIsLockedOutWhileThisJvmHoldsTheDirectory() throws Exception {
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      String line = runToEnd(child("try"));
      assertTrue(line.startsWith("LOCKED_OUT "), line);
      assertTrue(line.contains("in use by another process"), line);
      assertTrue(line.contains(dir.toString()), line);
      assertTrue(line.contains("process " + ProcessHandle.current().pid()), line);
    }
    assertEquals("OPENED", runToEnd(child("try")));
  }

  @Test
  void failedSecondOpenInThisJvmDoesNotReleaseTheOsLock() throws Exception {
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      assertThrows(CdcStoreException.class, () -> FileCheckpointStore.open(dir));
      String line = runToEnd(child("try"));
      assertTrue(line.startsWith("LOCKED_OUT "), line);
    }
  }

  @Test
  void thisJvmIsLockedOutWhileAChildHoldsTheDirectory() throws Exception {
    Process holder = child("hold");
    try {
      BufferedReader out = reader(holder);
      assertEquals("HOLDING", out.readLine());
      CdcStoreException e =
          assertThrows(CdcStoreException.class, () -> FileCheckpointStore.open(dir));
      assertTrue(e.getMessage().contains("in use by another process"), e.getMessage());
      assertTrue(e.getMessage().contains("process " + holder.pid()), e.getMessage());
      holder.getOutputStream().close(); // tells the child to close its store
      assertEquals("RELEASED", out.readLine());
      assertTrue(holder.waitFor(60, TimeUnit.SECONDS));
    } finally {
      holder.destroyForcibly();
    }
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(3)));
    }
  }

  @Test
  void lockOfAKilledProcessIsReleasedByTheOs() throws Exception {
    Process holder = child("hold");
    try {
      assertEquals("HOLDING", reader(holder).readLine());
      assertThrows(CdcStoreException.class, () -> FileCheckpointStore.open(dir));
      holder.destroyForcibly();
      assertTrue(holder.waitFor(60, TimeUnit.SECONDS));
    } finally {
      holder.destroyForcibly();
    }
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      assertEquals(java.util.Optional.empty(), store.load("s"));
    }
  }

  private Process child(String mode) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    return new ProcessBuilder(
            java,
            "-cp",
            System.getProperty("java.class.path"),
            LockProbe.class.getName(),
            mode,
            dir.toString())
        .redirectError(ProcessBuilder.Redirect.INHERIT)
        .start();
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
