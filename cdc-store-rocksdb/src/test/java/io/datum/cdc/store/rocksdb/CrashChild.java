package io.datum.cdc.store.rocksdb;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.PgLsn;
import io.datum.cdc.embedded.ChildJvm;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Run in a child JVM by {@link CorruptionTest}, which kills it to leave checkpoints in the
 * write-ahead log only: {@code hold <dir>} opens the store, stores {@code Checkpoints.rich("s")},
 * watermark 0/2 for slot {@code other} and watermark 0/7 for slot {@code child} (three batches),
 * prints {@code HOLDING}, and closes it when its standard input ends.
 */
public final class CrashChild {

  private CrashChild() {}

  /**
   * Starts {@code CrashChild hold dir} in a child JVM with this JVM's class path. Its {@code
   * java.io.tmpdir} is {@code nativeTmp}, so the copy of RocksDB's native library the child
   * extracts, which a SIGKILL leaves behind, is deleted with the test's temporary directory.
   */
  static Process start(String mode, Path dir, Path nativeTmp) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    return new ProcessBuilder(
            java,
            "-Djava.io.tmpdir=" + nativeTmp,
            "-cp",
            ChildJvm.classPath(),
            CrashChild.class.getName(),
            mode,
            dir.toString())
        .redirectError(ProcessBuilder.Redirect.INHERIT)
        .start();
  }

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[1]);
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
      store.store(Checkpoints.rich("s"));
      store.store(CdcCheckpoint.atWatermark("other", PgLsn.of(2)));
      store.store(CdcCheckpoint.atWatermark("child", PgLsn.of(7)));
      System.out.println("HOLDING");
      System.out.flush();
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      while (in.readLine() != null) {
        // wait for the parent to close our standard input, or to kill this process
      }
    }
    System.out.flush();
  }
}
