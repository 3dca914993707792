package io.datum.cdc.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The cluster in a server's data directory: made by {@code initdb}, or for a server that does not
 * {@code fsync} copied from a template that {@code initdb} made once ({@code initdb} costs about
 * half a second of CPU, a copy of its 40 MB a few tens of milliseconds); and its version checked.
 *
 * <p>The template of an installation is made on first use in {@code <installation
 * directory>.cluster-<hash of the locale environment>} (initdb takes the cluster's locale from
 * {@code LANG} and {@code LC_*}), next to the unpacked binaries, under a file lock so that JVMs
 * starting at once make it once, and with {@code initdb --no-sync}: what it holds is copied, never
 * served. It is complete once renamed to its name; later servers, in this JVM or another, copy it.
 * Servers that {@code fsync} (the default) run {@code initdb} themselves, which syncs what it
 * writes, so that their cluster survives a crash of the machine from the start.
 *
 * <p>Stateless; thread-safe.
 */
final class Clusters {

  private static final List<String> LOCALE_VARIABLES =
      List.of("LANG", "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_MONETARY");

  private Clusters() {}

  /**
   * Creates the cluster of a data directory that holds none ({@code PG_VERSION} absent): with
   * {@code initdb}, or for a server {@linkplain #withoutFsync(Map) without fsync} as a copy of the
   * installation's template.
   *
   * @param installation the binaries; not {@code null}
   * @param dataDirectory the data directory; not {@code null}
   * @param log the file that receives initdb's output; not {@code null}
   * @param settings the server's settings; not {@code null}
   * @throws UncheckedIOException if initdb fails or the template cannot be made or copied
   */
  static void createIfAbsent(
      PostgresInstallation installation,
      Path dataDirectory,
      Path log,
      Map<String, String> settings) {
    if (Files.exists(dataDirectory.resolve("PG_VERSION"))) {
      return;
    }
    if (withoutFsync(settings)) {
      copyTo(installation, dataDirectory, log);
    } else {
      installation.initdb(dataDirectory, log, true);
    }
  }

  /**
   * Checks that a data directory holds a cluster of the major version asked for.
   *
   * @param installation the binaries looked for, for the message; not {@code null}
   * @param dataDirectory the data directory; not {@code null}
   * @param majorVersion the version asked for
   * @throws IllegalStateException if {@code PG_VERSION} names another version or cannot be read
   */
  static void checkVersion(
      PostgresInstallation installation, Path dataDirectory, int majorVersion) {
    String dataVersion;
    try {
      // the major version initdb wrote (just the major since PostgreSQL 10)
      dataVersion =
          Files.readString(dataDirectory.resolve("PG_VERSION"), StandardCharsets.US_ASCII).trim();
    } catch (IOException e) {
      dataVersion = "unknown (" + e + ")";
    }
    if (!Integer.toString(majorVersion).equals(dataVersion)) {
      throw new IllegalStateException(
          "the embedded PostgreSQL in "
              + dataDirectory
              + " runs major version "
              + dataVersion
              + ", not "
              + majorVersion
              + " as asked: binaries of another version are where version "
              + majorVersion
              + "'s were looked for ("
              + installation
              + "), or the data directory is of another version");
    }
  }

  /**
   * Whether a server with these settings writes without {@code fsync}: its {@code fsync} setting is
   * one of PostgreSQL's spellings of false ({@code off}, {@code false}, {@code no}, {@code 0}, any
   * case).
   *
   * @param settings the server's settings; not {@code null}
   * @return {@code true} if the server does not fsync
   */
  static boolean withoutFsync(Map<String, String> settings) {
    String fsync = settings.getOrDefault("fsync", "on").trim().toLowerCase(Locale.ROOT);
    return List.of("off", "false", "no", "0").contains(fsync);
  }

  /**
   * Fills an empty data directory with a copy of the installation's template, making the template
   * first if there is none.
   *
   * @param installation the binaries; not {@code null}
   * @param dataDirectory the data directory, empty or absent; not {@code null}
   * @param log the file that receives initdb's output when the template is made; not {@code null}
   * @throws UncheckedIOException if the template cannot be made or copied; the message names the
   *     directories
   */
  private static void copyTo(PostgresInstallation installation, Path dataDirectory, Path log) {
    Path template = templateOf(installation);
    try {
      if (!Files.isDirectory(template)) {
        make(installation, template, log);
      }
      copyTree(template, dataDirectory);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot copy the cluster template " + template + " to " + dataDirectory, e);
    }
  }

  private static Path templateOf(PostgresInstallation installation) {
    StringBuilder locale = new StringBuilder();
    for (String variable : LOCALE_VARIABLES) {
      locale.append(variable).append('=').append(System.getenv(variable)).append('\n');
    }
    String hash = Integer.toHexString(locale.toString().hashCode());
    Path directory = installation.directory();
    return directory.resolveSibling(directory.getFileName() + ".cluster-" + hash);
  }

  private static void make(PostgresInstallation installation, Path template, Path log)
      throws IOException {
    // another JVM may be making the same template: the lock makes this one wait for it
    try (FileChannel channel =
            FileChannel.open(
                template.resolveSibling(template.getFileName() + ".lock"),
                StandardOpenOption.CREATE,
                StandardOpenOption.WRITE);
        FileLock lock = channel.lock()) {
      if (Files.isDirectory(template)) {
        return;
      }
      Path partial = template.resolveSibling(template.getFileName() + ".partial");
      ScratchDirectories.deleteRecursively(partial); // one cut off
      installation.initdb(partial, log, false);
      Files.writeString(
          partial.resolve("datum-cdc-template"),
          "a cluster template of " + installation + "\n",
          StandardCharsets.UTF_8);
      Files.move(partial, template, StandardCopyOption.ATOMIC_MOVE);
    }
  }

  /** Copies the files of {@code from} into {@code to}, permissions kept, the marker left out. */
  private static void copyTree(Path from, Path to) throws IOException {
    Files.createDirectories(to);
    Files.setPosixFilePermissions(to, Files.getPosixFilePermissions(from));
    Files.walkFileTree(
        from,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attributes)
              throws IOException {
            if (!dir.equals(from)) {
              Files.copy(dir, to.resolve(from.relativize(dir)), StandardCopyOption.COPY_ATTRIBUTES);
            }
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attributes)
              throws IOException {
            Path relative = from.relativize(file);
            if (!relative.toString().equals("datum-cdc-template")) {
              Files.copy(file, to.resolve(relative), StandardCopyOption.COPY_ATTRIBUTES);
            }
            return FileVisitResult.CONTINUE;
          }
        });
  }
}
