package io.datum.cdc.store.file;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.SlotNames;
import io.datum.cdc.spi.AbstractCheckpointStore;
import io.datum.cdc.spi.CheckpointCodec;
import io.datum.cdc.spi.StoreFiles;
import io.datum.cdc.spi.StoreLock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * A {@link CdcCheckpointStore} that keeps one file per slot, {@code <dir>/<slot>.checkpoint}, in a
 * directory it locks for its own exclusive use. URI: {@code file:/var/lib/app/cdc}.
 *
 * <p><b>Format.</b> Each file holds one checkpoint in the binary form of {@link CheckpointCodec}
 * (magic number, format version, CRC32C). A file that does not decode makes {@link #load} throw a
 * {@link CdcStoreException} naming it. Versions before 0.2 wrote {@code <slot>.json} files instead;
 * {@link #open} refuses a directory holding one, naming it and saying how to migrate, rather than
 * ignore it.
 *
 * <p><b>Durability.</b> {@link #store} writes the checkpoint to a new temporary file in the same
 * directory, fsyncs it, renames it atomically over {@code <slot>.checkpoint} and fsyncs the
 * directory. When {@code store} returns, the file's data, the rename and the directory entry are on
 * stable storage, so the checkpoint survives a process crash and a power loss. A crash at any point
 * leaves either the previous or the new file, never a mix; temporary files a crash left are ignored
 * by {@link #load} and deleted by the next {@link #open}.
 *
 * <p><b>Cost.</b> Concurrent stores are group-committed: one batch writes each slot's newest
 * checkpoint (a file of a few dozen bytes and one fsync per slot in the batch) and then fsyncs the
 * directory once. A lone caller pays one write and two fsyncs per {@code store}.
 *
 * <p><b>Exclusivity.</b> The directory is locked through {@code <dir>/.lock} ({@link StoreLock})
 * until {@link #close}: a second store on the same directory, in another process or in this JVM,
 * fails to open. The {@code .lock} file itself stays.
 *
 * <p>Safe for concurrent use by several threads.
 */
public final class FileCheckpointStore extends AbstractCheckpointStore {

  private static final String SUFFIX = ".checkpoint";
  private static final String LEGACY_SUFFIX = ".json";
  private static final Pattern TEMP =
      Pattern.compile("[a-z0-9_]{1,63}\\.checkpoint\\.[0-9a-f-]+\\.tmp");

  private final Path directory;
  private final String run = Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 1);
  private final AtomicLong temps = new AtomicLong();

  private FileCheckpointStore(Path directory, StoreLock lock) {
    super("file checkpoint store " + directory, lock);
    this.directory = directory;
  }

  /**
   * Opens the store in {@code directory}: creates the directory (and missing parents, fsyncing each
   * new entry's parent) if it does not exist, locks it, and deletes temporary files a crash left
   * behind.
   *
   * @param directory the directory holding the checkpoint files; a relative path is resolved
   *     against the working directory
   * @return the open store; the caller closes it
   * @throws NullPointerException if {@code directory} is null
   * @throws CdcStoreException naming the directory if it is in use by another process or another
   *     open store of this JVM, exists but is not a directory, cannot be created, read or locked,
   *     or holds checkpoint files of the JSON format of versions before 0.2
   */
  public static FileCheckpointStore open(Path directory) {
    Path dir = Objects.requireNonNull(directory, "directory").toAbsolutePath();
    StoreFiles.createDirectories(dir, "file checkpoint store");
    StoreLock lock = StoreLock.acquire(dir.resolve(".lock"), "file checkpoint store " + dir);
    try {
      List<Path> legacy = new ArrayList<>();
      try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
        for (Path entry : entries) {
          String name = entry.getFileName().toString();
          if (TEMP.matcher(name).matches()) {
            Files.deleteIfExists(entry);
          } else if (name.endsWith(LEGACY_SUFFIX)
              && SlotNames.isValid(slotOf(name, LEGACY_SUFFIX))) {
            legacy.add(entry);
          }
        }
      }
      if (!legacy.isEmpty()) {
        throw new CdcStoreException(
            "file checkpoint store "
                + dir
                + " holds checkpoint files in the JSON format of datum-cdc before 0.2, which this"
                + " version does not read: "
                + legacy
                + ". To migrate, stop the consumer and delete these files: each slot then resumes"
                + " from the position its replication slot confirmed to the server, and events"
                + " acknowledged after that position are delivered again");
      }
      return new FileCheckpointStore(dir, lock);
    } catch (IOException | RuntimeException e) {
      try {
        lock.release();
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      if (e instanceof IOException) {
        throw new CdcStoreException(
            "cannot list checkpoint directory " + dir + ": " + StoreFiles.describe((IOException) e),
            e);
      }
      throw (RuntimeException) e;
    }
  }

  /**
   * Returns the directory this store keeps its files in.
   *
   * @return the absolute directory path
   */
  public Path directory() {
    return directory;
  }

  /** Reads {@code <dir>/<slot>.checkpoint}; null if it does not exist. */
  @Override
  protected byte[] read(String slot) throws IOException {
    try {
      return Files.readAllBytes(fileOf(slot));
    } catch (NoSuchFileException e) {
      return null;
    }
  }

  /**
   * Replaces each slot's file atomically (temporary file, fsync, rename), then fsyncs the
   * directory.
   */
  @Override
  protected void write(Map<String, byte[]> batch) throws IOException {
    for (Map.Entry<String, byte[]> entry : batch.entrySet()) {
      Path target = fileOf(entry.getKey());
      Path temp =
          directory.resolve(
              entry.getKey()
                  + SUFFIX
                  + '.'
                  + run
                  + '-'
                  + Long.toHexString(temps.incrementAndGet())
                  + ".tmp");
      try {
        try (FileChannel channel =
            FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
          ByteBuffer buffer = ByteBuffer.wrap(entry.getValue());
          while (buffer.hasRemaining()) {
            channel.write(buffer);
          }
          channel.force(true);
        }
        Files.move(
            temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (IOException e) {
        CdcStoreException failure =
            new CdcStoreException(
                "cannot write checkpoint file "
                    + target
                    + " (the previous one is unchanged): "
                    + StoreFiles.describe(e),
                e);
        try {
          Files.deleteIfExists(temp);
        } catch (IOException suppressed) {
          failure.addSuppressed(suppressed);
        }
        throw failure;
      }
    }
    try {
      StoreFiles.forceDirectory(directory);
    } catch (IOException e) {
      throw new CdcStoreException(
          "checkpoint files in "
              + directory
              + " were replaced, but fsyncing the directory failed, so they may not survive a"
              + " power loss: "
              + e,
          e);
    }
  }

  /** Lists the slots with a {@code <slot>.checkpoint} file. */
  @Override
  protected List<String> list() throws IOException {
    List<String> slots = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory, "*" + SUFFIX)) {
      for (Path entry : entries) {
        String slot = slotOf(entry.getFileName().toString(), SUFFIX);
        if (SlotNames.isValid(slot)) {
          slots.add(slot);
        }
      }
    }
    return slots;
  }

  /** Nothing to release but the lock, which the base releases. */
  @Override
  protected void release() {}

  /** Returns the slot's file. */
  @Override
  protected String where(String slot) {
    return "checkpoint file " + fileOf(slot);
  }

  /**
   * Returns this store's URI, such as {@code file:///var/lib/app/cdc/}; {@link
   * io.datum.cdc.CheckpointStores#open(java.net.URI)} opens this directory again with it.
   *
   * @return the directory as a {@code file:} URI
   */
  @Override
  public String location() {
    return directory.toUri().toString();
  }

  private Path fileOf(String validSlot) {
    return directory.resolve(validSlot + SUFFIX);
  }

  private static String slotOf(String fileName, String suffix) {
    return fileName.substring(0, fileName.length() - suffix.length());
  }
}
