package io.datum.cdc.store.file;

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

/** Directory creation and directory fsync. */
final class Durability {

  /** Windows cannot open a directory as a channel; NTFS journals renames itself. */
  private static final boolean CAN_FSYNC_DIRECTORIES = File.separatorChar == '/';

  private Durability() {}

  /**
   * Forces a directory's entries (file creations, renames, deletions) to stable storage.
   *
   * @param dir an existing directory
   * @throws IOException if the directory cannot be opened or fsynced
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
   * Creates {@code dir} and its missing parents, fsyncing the parent of every directory created,
   * so the new directory's entry survives a power loss.
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
      throw new CdcStoreException(
          "checkpoint directory " + dir + " exists and is not a directory", e);
    } catch (IOException e) {
      throw new CdcStoreException("cannot create checkpoint directory " + dir + ": " + e, e);
    }
    for (Path created : missing) {
      Path parent = created.getParent();
      try {
        forceDirectory(parent);
      } catch (IOException e) {
        throw new CdcStoreException(
            "created checkpoint directory " + created + " but cannot fsync its parent " + parent
                + ": " + e,
            e);
      }
    }
  }
}
