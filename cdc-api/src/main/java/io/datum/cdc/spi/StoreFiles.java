package io.datum.cdc.spi;

import io.datum.cdc.CdcStoreException;
import java.io.File;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
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
      throw new CdcStoreException("cannot create " + store + " directory " + dir + ": " + e, e);
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
}
