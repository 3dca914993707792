package io.datum.cdc.testkit;

import io.datum.cdc.embedded.ChildJvm;
import io.datum.cdc.testkit.internal.CheckpointStoreWriter;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM running {@link CheckpointStoreWriter} on this JVM's class path, for the kit's
 * cross-process tests. Its stderr goes to a file, shown in failure messages.
 */
final class StoreChild implements AutoCloseable {

  private static final long EXIT_TIMEOUT_SECONDS = 30;

  private final Process process;
  private final BufferedReader stdout;
  private final Path stderr;

  private StoreChild(Process process, Path stderr) {
    this.process = process;
    this.stdout =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    this.stderr = stderr;
  }

  /**
   * Starts {@code java -cp <this class path> CheckpointStoreWriter args...}.
   *
   * @param stderr the file the child's stderr goes to; outside the store's directory
   * @param args the writer's arguments
   */
  static StoreChild start(Path stderr, String... args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(ChildJvm.QUICK_START_OPTIONS);
    command.add("-cp");
    command.add(ChildJvm.classPath());
    // a killed child cannot delete what it unpacked (e.g. RocksDB's native library): keep such
    // files beside the stderr file, in the test's temporary directory
    Path tmp = stderr.toAbsolutePath().getParent().resolve("child-tmp");
    Files.createDirectories(tmp);
    command.add("-Djava.io.tmpdir=" + tmp);
    command.add(CheckpointStoreWriter.class.getName());
    command.addAll(List.of(args));
    Process process =
        new ProcessBuilder(command)
            .redirectError(ProcessBuilder.Redirect.to(stderr.toFile()))
            .start();
    return new StoreChild(process, stderr);
  }

  /** Returns the next line of the child's stdout, or null once it exited and all was read. */
  String readLine() throws IOException {
    return stdout.readLine();
  }

  /**
   * Reads {@code count} lines {@code "stored <n>"}, checking that n goes up by one from {@code
   * last}.
   *
   * @return the last n read, {@code last} if {@code count} is 0
   */
  long readStored(int count, long last) throws IOException {
    for (int i = 0; i < count; i++) {
      String line = readLine();
      if (line == null) {
        throw new AssertionError(
            "the child JVM ended after " + i + " of " + count + " stores" + stderr());
      }
      last = parseStored(line, last);
    }
    return last;
  }

  /** Reads the rest of the lines {@code "stored <n>"}, such as those a killed child printed. */
  long drainStored(long last) throws IOException {
    for (String line = readLine(); line != null; line = readLine()) {
      last = parseStored(line, last);
    }
    return last;
  }

  private long parseStored(String line, long last) {
    if (!line.startsWith("stored ")) {
      throw new AssertionError("the child JVM failed: " + line + stderr());
    }
    long n = Long.parseLong(line.substring("stored ".length()));
    if (n != last + 1) {
      throw new AssertionError(
          "the child must store "
              + (last + 1)
              + " after "
              + last
              + " (it continues after the watermark it loads), but stored "
              + n);
    }
    return n;
  }

  /** Kills the child with SIGKILL (no shutdown hooks run) and waits until it is gone. */
  void kill() throws InterruptedException {
    // through the handle: Process.destroyForcibly() would also close stdout, losing the lines
    // the child printed before it died
    process.toHandle().destroyForcibly();
    if (!process.waitFor(EXIT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
      throw new AssertionError("child JVM " + process.pid() + " did not die after SIGKILL");
    }
  }

  /** Waits for the child to exit on its own and returns its exit status. */
  int waitForExit() throws InterruptedException {
    if (!process.waitFor(EXIT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
      throw new AssertionError(
          "child JVM "
              + process.pid()
              + " did not exit within "
              + EXIT_TIMEOUT_SECONDS
              + " s"
              + stderr());
    }
    return process.exitValue();
  }

  /** Returns the child's stderr so far, for failure messages, as "\nchild stderr:\n...". */
  String stderr() {
    try {
      String text = Files.readString(stderr, StandardCharsets.UTF_8);
      if (text.length() > 4000) {
        text = "..." + text.substring(text.length() - 4000);
      }
      return text.isEmpty() ? "" : "\nchild stderr:\n" + text;
    } catch (IOException e) {
      return "\n(cannot read child stderr " + stderr + ": " + e + ")";
    }
  }

  /** Kills the child if it still runs and closes the pipes. */
  @Override
  public void close() throws IOException {
    try {
      if (process.isAlive()) {
        kill();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while killing child JVM " + process.pid());
    } finally {
      process.getOutputStream().close();
      stdout.close();
    }
  }
}
