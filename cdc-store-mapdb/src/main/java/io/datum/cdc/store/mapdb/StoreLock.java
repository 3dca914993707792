package io.datum.cdc.store.mapdb;

import io.datum.cdc.CdcStoreException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The exclusive hold on a MapDB checkpoint file: a JVM-wide registry of held files, which excludes
 * other stores of this JVM, and an OS lock on {@code <file>.lock}, which excludes other processes
 * and holds this process's id for error messages.
 *
 * <p>The registry is checked before any file is opened. On POSIX systems closing <em>any</em>
 * descriptor of a file releases every lock the process holds on it (see {@link FileLock}), and
 * MapDB's own volume constructor leaves its descriptor open when its lock attempt fails; so a
 * second open in this JVM must never get as far as touching the lock file or the data file.
 */
final class StoreLock {

  /** Real paths of the data files that stores of this JVM hold. */
  private static final Set<Path> HELD = ConcurrentHashMap.newKeySet();

  /** Channels that must never be closed, see {@link #acquire}. */
  private static final Set<FileChannel> PARKED = ConcurrentHashMap.newKeySet();

  private final Path file;
  private final Path lockFile;
  private final FileChannel channel;
  private final FileLock lock;

  private StoreLock(Path file, Path lockFile, FileChannel channel, FileLock lock) {
    this.file = file;
    this.lockFile = lockFile;
    this.channel = channel;
    this.lock = lock;
  }

  /** Returns the lock file of a data file: {@code <file>.lock}. */
  static Path lockFileOf(Path file) {
    return file.resolveSibling(file.getFileName() + ".lock");
  }

  /**
   * Takes the hold on {@code file} for one store.
   *
   * @param file the data file's real path (its parent exists; the file need not)
   * @return the hold
   * @throws CdcStoreException if another store of this JVM or another process holds it, or the lock
   *     file cannot be created or locked
   */
  static StoreLock acquire(Path file) {
    Path lockFile = lockFileOf(file);
    if (!HELD.add(file)) {
      throw inUse(
          file, "another MapDbCheckpointStore of this JVM (process " + pid() + ") has it open");
    }
    FileChannel channel = null;
    boolean locked = false;
    try {
      channel =
          FileChannel.open(
              lockFile,
              StandardOpenOption.CREATE,
              StandardOpenOption.READ,
              StandardOpenOption.WRITE);
      FileLock lock;
      try {
        lock = channel.tryLock();
      } catch (OverlappingFileLockException e) {
        // Code outside this store locked the file in this JVM. Closing our channel would release
        // that lock too (POSIX), so keep the channel open for the life of the JVM instead.
        PARKED.add(channel);
        channel = null;
        throw inUse(file, "this JVM (process " + pid() + ") holds a lock on " + lockFile);
      }
      if (lock == null) {
        throw inUse(file, owner(channel) + " holds the lock on " + lockFile);
      }
      channel.truncate(0);
      channel.write(ByteBuffer.wrap((pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
      locked = true;
      return new StoreLock(file, lockFile, channel, lock);
    } catch (IOException e) {
      throw new CdcStoreException(
          "cannot lock mapdb checkpoint store " + file + " through " + lockFile + ": " + e, e);
    } finally {
      if (!locked) {
        if (channel != null) {
          try {
            channel.close();
          } catch (IOException ignored) {
            // already failing; the original error is more useful
          }
        }
        HELD.remove(file);
      }
    }
  }

  /** Returns the lock file. */
  Path lockFile() {
    return lockFile;
  }

  /**
   * Releases the hold. The lock file stays: deleting it would race with a process about to lock it.
   *
   * @throws IOException if the lock or its channel cannot be released
   */
  void release() throws IOException {
    try {
      try {
        lock.release();
      } finally {
        channel.close();
      }
    } finally {
      HELD.remove(file);
    }
  }

  /**
   * Returns the exception for a store that is in use.
   *
   * @param file the data file
   * @param holder who holds it and how
   * @return the exception, message starting {@code mapdb checkpoint store <file> is in use by
   *     another process or store: }
   */
  static CdcStoreException inUse(Path file, String holder) {
    return inUse(file, holder, null);
  }

  /**
   * As {@link #inUse(Path, String)}, with a cause.
   *
   * @param file the data file
   * @param holder who holds it and how
   * @param cause the underlying failure, may be null
   * @return the exception
   */
  static CdcStoreException inUse(Path file, String holder, Throwable cause) {
    return new CdcStoreException(
        "mapdb checkpoint store "
            + file
            + " is in use by another process or store: "
            + holder
            + "; only one store may use the file at a time, close the other first",
        cause);
  }

  /** Reads the holder's process id from the lock file through our own (unlocked) channel. */
  private static String owner(FileChannel channel) {
    try {
      ByteBuffer buffer = ByteBuffer.allocate(32);
      channel.read(buffer, 0);
      String text =
          new String(buffer.array(), 0, buffer.position(), StandardCharsets.US_ASCII).trim();
      return text.matches("[0-9]{1,19}") ? "process " + text : "another process";
    } catch (IOException e) {
      return "another process";
    }
  }

  private static long pid() {
    return ProcessHandle.current().pid();
  }
}
