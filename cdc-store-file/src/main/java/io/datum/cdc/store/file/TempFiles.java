package io.datum.cdc.store.file;

import io.datum.cdc.CdcStoreException;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * Names, and cleans up, the temporary files a store writes before renaming them over {@code
 * <slot>.json}: {@code <slot>.json.<counter>-<random>.tmp}, distinct for every writer.
 */
final class TempFiles {

  private static final Pattern NAME =
      Pattern.compile("[a-z0-9_]{1,63}\\.json\\.[0-9a-f-]{1,64}\\.tmp");

  private final Path directory;
  private final AtomicLong counter = new AtomicLong();
  private final String run = Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 1);

  /**
   * Creates the namer.
   *
   * @param directory the store's directory
   */
  TempFiles(Path directory) {
    this.directory = directory;
  }

  /**
   * Returns a fresh temporary file path.
   *
   * @param slot the valid slot name the file is for
   * @return a path no other writer of this store uses; the file does not exist yet
   */
  Path next(String slot) {
    return directory.resolve(
        slot + ".json." + run + '-' + Long.toHexString(counter.incrementAndGet()) + ".tmp");
  }

  /**
   * Deletes temporary files a crashed writer left; called while holding the directory lock, so no
   * writer is active.
   *
   * @throws CdcStoreException if the directory cannot be listed
   */
  void deleteLeftovers() {
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory)) {
      for (Path entry : entries) {
        if (NAME.matcher(entry.getFileName().toString()).matches()) {
          deleteQuietly(entry, null);
        }
      }
    } catch (IOException e) {
      throw new CdcStoreException("cannot list checkpoint directory " + directory + ": " + e, e);
    }
  }

  /**
   * Deletes a file if it exists, never throwing.
   *
   * @param file the file
   * @param failure if not null, the exception to record a deletion failure on as suppressed
   */
  void deleteQuietly(Path file, Exception failure) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      if (failure != null) {
        failure.addSuppressed(e);
      }
    }
  }
}
