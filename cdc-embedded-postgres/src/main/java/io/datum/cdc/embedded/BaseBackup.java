package io.datum.cdc.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Set;

/**
 * An online base backup of a running server by the low-level API, for a physical standby: what
 * {@code pg_basebackup -X none -R} does, without {@code pg_basebackup} (the zonky archives bring
 * only {@code initdb}, {@code pg_ctl} and {@code postgres}).
 *
 * <p>The steps of PostgreSQL docs, 26.3.4 "Making a Base Backup Using the Low Level API": {@code
 * pg_backup_start(label, fast => true)} (14: {@code pg_start_backup(label, true, false)},
 * non-exclusive) on one session, a copy of the data directory, {@code pg_backup_stop(false)} (14:
 * {@code pg_stop_backup(false, false)}) on the same session, whose {@code labelfile} becomes the
 * copy's {@code backup_label}. Left out of the copy, as {@code pg_basebackup} leaves them out
 * (basebackup.c, {@code excludeDirContents} and {@code excludeFiles}): the contents of {@code
 * pg_wal}, {@code pg_replslot} (the primary's slots are not the standby's), {@code pg_stat_tmp},
 * {@code pg_dynshmem}, {@code pg_notify}, {@code pg_serial}, {@code pg_snapshots} and {@code
 * pg_subtrans}, and {@code postmaster.pid}, {@code postmaster.opts}, {@code backup_label}, {@code
 * tablespace_map}, {@code pg_internal.init}. The WAL from the backup's start is streamed by the
 * standby from the primary, which keeps it for the physical slot created before the backup starts.
 * Files that disappear during the copy (a dropped table) are skipped; files written to during it
 * are repaired by replaying the WAL, as for every online backup ({@code full_page_writes}).
 */
final class BaseBackup {

  private static final Set<String> EMPTIED =
      Set.of(
          "pg_wal",
          "pg_replslot",
          "pg_stat_tmp",
          "pg_dynshmem",
          "pg_notify",
          "pg_serial",
          "pg_snapshots",
          "pg_subtrans");
  private static final Set<String> SKIPPED =
      Set.of(
          "postmaster.pid",
          "postmaster.opts",
          "backup_label",
          "tablespace_map",
          "backup_manifest",
          "pg_internal.init",
          "postgresql.auto.conf.tmp",
          "current_logfiles.tmp");

  private BaseBackup() {}

  /**
   * Copies a running server's data directory to {@code target} as a base backup.
   *
   * @param primary a connection to the server, superuser; its session runs the backup; not {@code
   *     null}
   * @param majorVersion the server's major version: 14 uses the functions' pre-15 names
   * @param source the server's data directory; not {@code null}
   * @param target the copy's data directory, absent or empty; created with mode 0700
   * @throws SQLException if the server refuses to start or stop the backup
   * @throws UncheckedIOException if the copy cannot be made
   */
  static void copy(Connection primary, int majorVersion, Path source, Path target)
      throws SQLException {
    String label = "datum-cdc standby " + target;
    try (PreparedStatement start =
        primary.prepareStatement(
            majorVersion >= 15
                ? "SELECT pg_backup_start(?, true)"
                : "SELECT pg_start_backup(?, true, false)")) {
      start.setString(1, label);
      start.executeQuery().close();
    }
    RuntimeException copyFailure = null;
    try {
      copyTree(source, target);
    } catch (RuntimeException e) {
      copyFailure = e; // the backup must end on this session even when the copy failed
    }
    String labelFile;
    try (Statement stop = primary.createStatement();
        ResultSet rs =
            stop.executeQuery(
                majorVersion >= 15
                    ? "SELECT labelfile FROM pg_backup_stop(false)"
                    : "SELECT labelfile FROM pg_stop_backup(false, false)")) {
      rs.next();
      labelFile = rs.getString(1);
    } catch (SQLException e) {
      if (copyFailure != null) {
        e.addSuppressed(copyFailure);
      }
      throw e;
    }
    if (copyFailure != null) {
      throw copyFailure;
    }
    try {
      Files.writeString(target.resolve("backup_label"), labelFile, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the backup_label of " + target, e);
    }
  }

  private static void copyTree(Path source, Path target) {
    try {
      Files.createDirectories(target);
      Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwx------"));
      Files.walkFileTree(
          source,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs)
                throws IOException {
              Path copy = target.resolve(source.relativize(dir).toString());
              if (!dir.equals(source)) {
                Files.createDirectories(copy);
                Files.setPosixFilePermissions(copy, Files.getPosixFilePermissions(dir));
              }
              Path parent = source.relativize(dir);
              if (parent.getNameCount() == 1 && EMPTIED.contains(parent.toString())) {
                if (parent.toString().equals("pg_wal")) {
                  Files.createDirectories(copy.resolve("archive_status"));
                }
                return FileVisitResult.SKIP_SUBTREE;
              }
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                throws IOException {
              String name = file.getFileName().toString();
              if (SKIPPED.contains(name) || name.startsWith("pgsql_tmp")) {
                return FileVisitResult.CONTINUE;
              }
              try {
                Files.copy(
                    file,
                    target.resolve(source.relativize(file).toString()),
                    StandardCopyOption.COPY_ATTRIBUTES,
                    LinkOption.NOFOLLOW_LINKS);
              } catch (NoSuchFileException gone) {
                // removed since the directory was listed (a dropped relation): not in the backup
              }
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
              if (e instanceof NoSuchFileException) {
                return FileVisitResult.CONTINUE; // removed since its directory was listed
              }
              throw e;
            }
          });
    } catch (IOException e) {
      throw new UncheckedIOException("cannot copy " + source + " to " + target, e);
    }
  }
}
