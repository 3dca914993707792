package io.datum.cdc.embedded;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The temporary base directories of servers, {@code ${java.io.tmpdir}/datum-cdc-pg-*}, and their
 * sweeping.
 *
 * <p>Each holds a file {@code owner} with the pid and start time (epoch milliseconds) of the JVM
 * that created it. A JVM killed before it closed its servers leaves its directories and, running in
 * them, its postmasters behind; the first server with a temporary directory in each JVM stops those
 * postmasters and deletes those directories: the ones whose owner is no longer alive (or whose pid
 * now belongs to another process), and those without an owner file older than ten minutes.
 */
final class ScratchDirectories {

  /** The name prefix of every base directory this class creates. */
  static final String PREFIX = "datum-cdc-pg-";

  private static final String OWNER_FILE = "owner";
  private static final Duration STALE_WITHOUT_OWNER = Duration.ofMinutes(10);
  private static final AtomicBoolean SWEPT = new AtomicBoolean();
  private static final System.Logger LOG = System.getLogger(ScratchDirectories.class.getName());

  private ScratchDirectories() {}

  /**
   * Creates a new base directory in {@code java.io.tmpdir}, owned by this JVM; the first call in a
   * JVM sweeps the stale directories first.
   *
   * @param dataDirectoryName the name of the data directory within a base directory, for finding
   *     the postmaster of a stale one; not {@code null}
   * @return the new directory, absolute; never {@code null}
   * @throws IOException if it cannot be created
   */
  static Path create(String dataDirectoryName) throws IOException {
    Path tmp = Paths.get(System.getProperty("java.io.tmpdir")).toAbsolutePath();
    if (SWEPT.compareAndSet(false, true)) {
      sweep(tmp, dataDirectoryName);
    }
    Path directory = Files.createTempDirectory(tmp, PREFIX);
    ProcessHandle self = ProcessHandle.current();
    String owner =
        self.pid() + " " + self.info().startInstant().map(Instant::toEpochMilli).orElse(0L) + "\n";
    Files.writeString(directory.resolve(OWNER_FILE), owner, StandardCharsets.US_ASCII);
    return directory;
  }

  /**
   * Stops the postmasters of stale directories in {@code tmp} and deletes those directories. A
   * directory that cannot be cleaned is logged ({@link System.Logger}, level WARNING) and left.
   *
   * @param tmp the directory that holds base directories; not {@code null}
   * @param dataDirectoryName the name of the data directory within a base directory; not {@code
   *     null}
   */
  static void sweep(Path tmp, String dataDirectoryName) {
    try (DirectoryStream<Path> dirs = Files.newDirectoryStream(tmp, PREFIX + "*")) {
      for (Path dir : dirs) {
        try {
          if (Files.isDirectory(dir) && isStale(dir)) {
            Postmaster.of(dir.resolve(dataDirectoryName))
                .filter(Postmaster::isPostgres)
                .ifPresent(p -> p.shutDown(EmbeddedPostgresServer.ShutdownMode.IMMEDIATE, null));
            deleteRecursively(dir);
          }
        } catch (IOException | RuntimeException e) {
          LOG.log(System.Logger.Level.WARNING, "cannot clean the stale " + dir, e);
        }
      }
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "cannot list " + tmp + " for stale directories", e);
    }
  }

  /**
   * Tells whether a base directory's owner is gone.
   *
   * @param dir a base directory; not {@code null}
   * @return {@code true} if its owner JVM is no longer alive, or it has no owner file and is older
   *     than ten minutes (a JVM killed between creating it and writing the owner)
   * @throws IOException if the directory cannot be read
   */
  static boolean isStale(Path dir) throws IOException {
    Path ownerFile = dir.resolve(OWNER_FILE);
    if (!Files.exists(ownerFile)) {
      Instant modified = Files.getLastModifiedTime(dir).toInstant();
      return modified.isBefore(Instant.now().minus(STALE_WITHOUT_OWNER));
    }
    String[] owner = Files.readString(ownerFile, StandardCharsets.US_ASCII).trim().split(" ");
    long pid;
    long started;
    try {
      pid = Long.parseLong(owner[0]);
      started = owner.length > 1 ? Long.parseLong(owner[1]) : 0L;
    } catch (NumberFormatException e) {
      return true; // not an owner file this class wrote
    }
    Optional<ProcessHandle> process = ProcessHandle.of(pid);
    if (process.isEmpty() || Postmaster.hasExited(process.get())) {
      return true;
    }
    long actualStart = process.get().info().startInstant().map(Instant::toEpochMilli).orElse(0L);
    // same pid, different process start: the pid was reused
    return started != 0L && actualStart != 0L && Math.abs(actualStart - started) > 2_000L;
  }

  /**
   * Deletes a directory and everything in it; does nothing if it does not exist.
   *
   * @param root the directory; not {@code null}
   * @throws IOException if something in it cannot be deleted
   */
  static void deleteRecursively(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    Files.walkFileTree(
        root,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
              throws IOException {
            Files.deleteIfExists(file);
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
            if (exc != null) {
              throw exc;
            }
            Files.deleteIfExists(dir);
            return FileVisitResult.CONTINUE;
          }
        });
  }
}
