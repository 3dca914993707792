package io.datum.cdc.store.file;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.SlotNames;
import io.datum.cdc.spi.GroupCommit;
import io.datum.cdc.spi.StoreFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Collection;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A {@link CdcCheckpointStore} that keeps one JSON file per slot, {@code <dir>/<slot>.json}, in a
 * directory it locks for its own exclusive use. URI: {@code file:/var/lib/app/cdc}.
 *
 * <p><b>Durability.</b> {@link #store} writes the checkpoint to a new temporary file in the same
 * directory, fsyncs it, renames it atomically over {@code <slot>.json} and fsyncs the directory.
 * When {@code store} returns, the file's data, the rename and the directory entry are on stable
 * storage, so the checkpoint survives a process crash and a power loss. A crash at any point leaves
 * either the previous or the new file, never a mix; stray temporary files are ignored by {@link
 * #load} and deleted by the next {@link #open}.
 *
 * <p><b>Cost.</b> Concurrent stores are group-committed ({@link GroupCommit}): one batch writes
 * each slot's newest checkpoint (a file of a few hundred bytes and one fsync per slot in the batch)
 * and then fsyncs the directory once. A lone caller pays one write and two fsyncs per {@code
 * store}, a few milliseconds on a disk without a battery-backed cache; {@code n} callers storing
 * the same slot at once share about one such batch.
 *
 * <p><b>Exclusivity.</b> The directory is locked through {@code <dir>/.lock} (an OS file lock,
 * released by the OS if the process dies) until {@link #close}: a second store on the same
 * directory, in another process or in this JVM, fails to open. The {@code .lock} file itself stays.
 *
 * <p>Safe for concurrent use by several threads.
 */
public final class FileCheckpointStore implements CdcCheckpointStore {

  private static final String SUFFIX = ".json";

  private final Path directory;
  private final DirectoryLock directoryLock;
  private final TempFiles tempFiles;

  /** Stores hold the read lock, close the write lock: close waits for stores in flight. */
  private final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();

  private final GroupCommit groupCommit;
  private boolean closed; // guarded by lifecycle

  private FileCheckpointStore(Path directory, DirectoryLock directoryLock, TempFiles tempFiles) {
    this.directory = directory;
    this.directoryLock = directoryLock;
    this.tempFiles = tempFiles;
    this.groupCommit = new GroupCommit(directory.toString(), this::writeBatch);
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
   * @throws CdcStoreException if the directory is in use by another process or another open store
   *     of this JVM (the message names it), exists but is not a directory, or cannot be created,
   *     read or locked
   */
  public static FileCheckpointStore open(Path directory) {
    Path dir = Objects.requireNonNull(directory, "directory").toAbsolutePath();
    StoreFiles.createDirectories(dir, "file checkpoint store");
    DirectoryLock lock = DirectoryLock.acquire(dir);
    TempFiles tempFiles = new TempFiles(dir);
    try {
      tempFiles.deleteLeftovers();
    } catch (RuntimeException e) {
      try {
        lock.release();
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    return new FileCheckpointStore(dir, lock, tempFiles);
  }

  /**
   * Returns the directory this store keeps its files in.
   *
   * @return the absolute directory path
   */
  public Path directory() {
    return directory;
  }

  /**
   * Reads {@code <dir>/<slot>.json}. Reading does not need the store to be open: it sees the last
   * completely written file (renames are atomic), also after {@link #close}.
   *
   * @param slot a valid slot name; checked before any file is touched
   * @return the stored checkpoint, or empty if the slot's file does not exist
   * @throws CdcConfigurationException if the slot name is invalid
   * @throws CdcStoreException naming the file if it cannot be read or is empty, truncated, not
   *     JSON, of another format version, of another slot, or otherwise not a valid checkpoint
   */
  @Override
  public Optional<CdcCheckpoint> load(String slot) {
    SlotNames.requireValid(slot);
    Path file = fileOf(slot);
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      return Optional.empty();
    } catch (IOException e) {
      throw new CdcStoreException("cannot read checkpoint file " + file + ": " + e, e);
    }
    return Optional.of(CheckpointJson.decode(bytes, slot, file));
  }

  /**
   * Replaces {@code <dir>/<slot>.json}; durable when this method returns (file data, rename and
   * directory entry fsynced, see the class description). Concurrent calls are group-committed
   * ({@link GroupCommit}): they share one directory fsync, and calls for the same slot collapse to
   * the newest checkpoint.
   *
   * @param checkpoint the checkpoint, not null
   * @throws NullPointerException if {@code checkpoint} is null
   * @throws CdcStoreException naming the file if writing, fsyncing or renaming fails; a later
   *     {@link #load} returns the previous or the new checkpoint, never a mix
   * @throws IllegalStateException if the store is closed
   */
  @Override
  public void store(CdcCheckpoint checkpoint) {
    Objects.requireNonNull(checkpoint, "checkpoint");
    SlotNames.requireValid(checkpoint.slot());
    ReentrantReadWriteLock.ReadLock open = lifecycle.readLock();
    open.lock();
    try {
      if (closed) {
        throw new IllegalStateException("file checkpoint store " + directory + " is closed");
      }
      groupCommit.store(checkpoint);
    } finally {
      open.unlock();
    }
  }

  /** Writes one batch: each slot's file replaced atomically, then one directory fsync. */
  private void writeBatch(Collection<CdcCheckpoint> batch) {
    for (CdcCheckpoint checkpoint : batch) {
      write(checkpoint.slot(), CheckpointJson.encode(checkpoint));
    }
    try {
      StoreFiles.forceDirectory(directory);
    } catch (IOException e) {
      throw new CdcStoreException(
          "checkpoint files in "
              + directory
              + " were replaced, but fsyncing the directory failed,"
              + " so the new checkpoints may not survive a power loss: "
              + e,
          e);
    }
  }

  private void write(String slot, byte[] content) {
    Path target = fileOf(slot);
    Path temp = tempFiles.next(slot);
    try {
      try (FileChannel channel =
          FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        ByteBuffer buffer = ByteBuffer.wrap(content);
        while (buffer.hasRemaining()) {
          channel.write(buffer);
        }
        channel.force(true);
      }
      Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      CdcStoreException failure =
          new CdcStoreException(
              "cannot write checkpoint file " + target + " (the previous one is unchanged): " + e,
              e);
      tempFiles.deleteQuietly(temp, failure);
      throw failure;
    }
  }

  /**
   * Lists the slots with a checkpoint file ({@code <slot>.json} with a valid slot name).
   *
   * @return the slot names, sorted
   * @throws CdcStoreException if the directory cannot be listed
   */
  @Override
  public java.util.SortedSet<String> slots() {
    java.util.SortedSet<String> slots = new java.util.TreeSet<>();
    try (java.util.stream.Stream<Path> files = Files.list(directory)) {
      files.forEach(
          f -> {
            String name = f.getFileName().toString();
            if (name.endsWith(SUFFIX)) {
              String slot = name.substring(0, name.length() - SUFFIX.length());
              if (SlotNames.isValid(slot)) {
                slots.add(slot);
              }
            }
          });
    } catch (IOException e) {
      throw new CdcStoreException("cannot list checkpoint directory " + directory + ": " + e, e);
    }
    return java.util.Collections.unmodifiableSortedSet(slots);
  }

  /**
   * Returns this store's URI, such as {@code file:///var/lib/app/cdc/}; opening it with {@link
   * io.datum.cdc.CheckpointStores#open(java.net.URI)} opens this directory again.
   *
   * @return the directory as a {@code file:} URI
   */
  @Override
  public String location() {
    return directory.toUri().toString();
  }

  /**
   * Waits for stores in progress, then releases the directory lock. Idempotent; afterwards {@link
   * #store} throws {@link IllegalStateException} and another store may open the directory.
   *
   * @throws CdcStoreException if the lock could not be released
   */
  @Override
  public void close() {
    ReentrantReadWriteLock.WriteLock exclusive = lifecycle.writeLock();
    exclusive.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      directoryLock.release();
    } catch (IOException e) {
      throw new CdcStoreException(
          "cannot release the lock of checkpoint directory " + directory + ": " + e, e);
    } finally {
      exclusive.unlock();
    }
  }

  /** Returns how many batches were written: at most the number of {@link #store} calls. */
  long batches() {
    return groupCommit.batches();
  }

  /** Returns a description naming the directory. */
  @Override
  public String toString() {
    return "FileCheckpointStore[" + directory + "]";
  }

  private Path fileOf(String validSlot) {
    return directory.resolve(validSlot + SUFFIX);
  }
}
