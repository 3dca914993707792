package io.datum.cdc.spi;

import io.datum.cdc.CdcStoreException;
import java.io.File;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * File-system durability helpers for checkpoint stores that keep files: a new file or rename is
 * durable only once its directory entry is fsynced too (POSIX {@code fsync(2)} on the directory;
 * ext4, XFS). Used by the {@code file:}, {@code rocksdb:} and {@code mapdb:} stores.
 */
public final class StoreFiles {

  /** Windows cannot open a directory as a channel; NTFS journals directory changes itself. */
  private static final boolean CAN_FSYNC_DIRECTORIES = File.separatorChar == '/';

  private StoreFiles() {}

  /**
   * Forces a directory's entries (creations, renames, deletions) to stable storage. Does nothing on
   * Windows.
   *
   * @param dir an existing directory
   * @throws IOException if it cannot be opened or fsynced
   */
  public static void forceDirectory(Path dir) throws IOException {
    if (!CAN_FSYNC_DIRECTORIES) {
      return;
    }
    try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
      channel.force(true);
    }
  }

  /**
   * Creates {@code dir} and its missing parents, fsyncing the parent of each directory created, so
   * the new entries survive a power loss.
   *
   * @param dir an absolute path
   * @param store what the directory is for, for messages ("file checkpoint store")
   * @throws CdcStoreException naming the directory if it exists and is not a directory, or cannot
   *     be created or synced
   */
  public static void createDirectories(Path dir, String store) {
    if (Files.isDirectory(dir)) {
      return;
    }
    List<Path> missing = new ArrayList<>();
    for (Path p = dir;
        p != null && Files.notExists(p, LinkOption.NOFOLLOW_LINKS);
        p = p.getParent()) {
      missing.add(p);
    }
    Collections.reverse(missing); // outermost first
    try {
      Files.createDirectories(dir);
    } catch (FileAlreadyExistsException e) {
      throw new CdcStoreException(
          store + " directory " + dir + " exists and is not a directory", e);
    } catch (IOException e) {
      throw new CdcStoreException(
          "cannot create " + store + " directory " + dir + ": " + describe(e), e);
    }
    for (Path created : missing) {
      Path parent = created.getParent();
      try {
        forceDirectory(parent);
      } catch (IOException e) {
        throw new CdcStoreException(
            "created "
                + store
                + " directory "
                + created
                + " but cannot fsync its parent "
                + parent
                + ": "
                + e,
            e);
      }
    }
  }

  /**
   * Describes a failure of a store's file operation with what to do about it, for the faults that
   * retrying cannot heal: permission denied (naming the user this process runs as), a read-only
   * file system, a path through a regular file, no space left. Each is reported by the JDK as an
   * {@link AccessDeniedException} or a {@link FileSystemException} whose reason is the operating
   * system's text ({@code strerror}: "Read-only file system", "Not a directory", "No space left on
   * device").
   *
   * @param e the failure, not null
   * @return {@code e.toString()}, followed by the remedy when one is known
   */
  public static String describe(IOException e) {
    String remedy = null;
    if (e instanceof AccessDeniedException denied) {
      remedy =
          "permission denied: the user this process runs as ("
              + System.getProperty("user.name")
              + ") needs write and search access to the directory of "
              + (denied.getFile() != null ? denied.getFile() : "the path")
              + ", and read and write access to it if it exists: change their owner or mode"
              + " (chown, chmod), or choose another path";
    } else if (e instanceof FileSystemException fs && fs.getReason() != null) {
      String reason = fs.getReason();
      if (reason.contains("Read-only file system")) {
        remedy = "the file system is mounted read-only: choose a path on a writable one";
      } else if (reason.contains("Not a directory")) {
        remedy = "a part of the path is a regular file, not a directory: choose another path";
      } else if (reason.contains("No space left")) {
        remedy = "the file system is full: free space on it or choose another path";
      }
    }
    return remedy == null ? e.toString() : e + " (" + remedy + ")";
  }
}
