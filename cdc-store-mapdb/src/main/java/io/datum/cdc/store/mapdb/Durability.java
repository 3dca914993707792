package io.datum.cdc.store.mapdb;

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

/** Directory creation and directory fsync, so that new directory entries survive a power loss. */
final class Durability {

  /** Windows cannot open a directory as a channel; NTFS journals its directory changes itself. */
  private static final boolean CAN_FSYNC_DIRECTORIES = File.separatorChar == '/';

  private Durability() {}

  /**
   * Forces a directory's entries (creations, renames, deletions) to stable storage.
   *
   * @param dir an existing directory
   * @throws IOException if it cannot be opened or fsynced
   */
  static void forceDirectory(Path dir) throws IOException {
    if (!CAN_FSYNC_DIRECTORIES) {
      return;
    }
    try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
      channel.force(true);
    }
  }

  /**
   * Creates {@code dir} and its missing parents, fsyncing the parent of each directory created.
   *
   * @param dir an absolute path
   * @throws CdcStoreException if it exists and is not a directory, or cannot be created or synced
   */
  static void createDirectories(Path dir) {
    if (Files.isDirectory(dir)) {
      return;
    }
    List<Path> missing = new ArrayList<>();
    for (Path p = dir; p != null && Files.notExists(p, LinkOption.NOFOLLOW_LINKS); p = p.getParent()) {
      missing.add(p);
    }
    Collections.reverse(missing); // outermost first
    try {
      Files.createDirectories(dir);
    } catch (FileAlreadyExistsException e) {
      throw new CdcStoreException("directory " + dir + " of the mapdb checkpoint store exists and is not a directory", e);
    } catch (IOException e) {
      throw new CdcStoreException("cannot create directory " + dir + " for the mapdb checkpoint store: " + e, e);
    }
    for (Path created : missing) {
      Path parent = created.getParent();
      try {
        forceDirectory(parent);
      } catch (IOException e) {
        throw new CdcStoreException(
            "created directory " + created + " but cannot fsync its parent " + parent + ": " + e, e);
      }
    }
  }
}
