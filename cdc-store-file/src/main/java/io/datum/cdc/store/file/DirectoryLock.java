package io.datum.cdc.store.file;

import io.datum.cdc.CdcStoreException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The exclusive lock on a checkpoint directory: an OS file lock on {@code <dir>/.lock}, which
 * excludes other processes, plus a JVM-wide registry of locked directories, which excludes other
 * stores of this JVM.
 *
 * <p>The registry is checked before the lock file is opened, because on POSIX systems closing any
 * descriptor of a file releases every lock the process holds on it (see {@link FileLock}): a failed
 * second open must not even open the lock file, or it would unlock the first store.
 */
final class DirectoryLock {

  /** The lock file's name in the directory; not a valid slot name, so never a checkpoint file. */
  static final String FILE_NAME = ".lock";

  /** Directories (by file key, else real path) locked by stores of this JVM. */
  private static final Set<Object> HELD = ConcurrentHashMap.newKeySet();

  /** Channels that must never be closed, see {@link #acquire}. */
  private static final Set<FileChannel> PARKED = ConcurrentHashMap.newKeySet();

  private final Object key;
  private final FileChannel channel;
  private final FileLock lock;

  private DirectoryLock(Object key, FileChannel channel, FileLock lock) {
    this.key = key;
    this.channel = channel;
    this.lock = lock;
  }

  /**
   * Locks {@code dir} for this store, writing this process's id into the lock file.
   *
   * @param dir an existing directory, absolute
   * @return the held lock
   * @throws CdcStoreException if another process or another store of this JVM holds it, or the lock
   *     file cannot be created or locked
   */
  static DirectoryLock acquire(Path dir) {
    Path lockFile = dir.resolve(FILE_NAME);
    Object key = identity(dir);
    if (!HELD.add(key)) {
      throw inUse(dir, lockFile, "another FileCheckpointStore of this JVM, pid " + pid());
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
        // Something else in this JVM locked the file. Closing our channel would release that lock
        // too (POSIX), so keep the channel open for the life of the JVM instead.
        PARKED.add(channel);
        channel = null;
        throw inUse(dir, lockFile, "this JVM, pid " + pid());
      }
      if (lock == null) {
        throw inUse(dir, lockFile, owner(channel));
      }
      channel.truncate(0);
      channel.write(ByteBuffer.wrap((pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
      locked = true;
      return new DirectoryLock(key, channel, lock);
    } catch (IOException e) {
      throw new CdcStoreException(
          "cannot lock checkpoint directory " + dir + " through " + lockFile + ": " + e, e);
    } finally {
      if (!locked) {
        closeQuietly(channel);
        HELD.remove(key);
      }
    }
  }

  /**
   * Releases the lock; the lock file stays (deleting it would race with a process about to lock
   * it).
   *
   * @throws IOException if the lock or the channel cannot be released
   */
  void release() throws IOException {
    try {
      try {
        lock.release();
      } finally {
        channel.close();
      }
    } finally {
      HELD.remove(key);
    }
  }

  private static Object identity(Path dir) {
    try {
      Object fileKey = Files.readAttributes(dir, BasicFileAttributes.class).fileKey();
      return fileKey != null ? fileKey : dir.toRealPath();
    } catch (IOException e) {
      throw new CdcStoreException("cannot read checkpoint directory " + dir + ": " + e, e);
    }
  }

  /** Reads the holder's process id from the lock file, through our own (unlocked) channel. */
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

  private static CdcStoreException inUse(Path dir, Path lockFile, String holder) {
    return new CdcStoreException(
        "checkpoint directory "
            + dir
            + " is in use by another process or store: "
            + holder
            + " holds the lock on "
            + lockFile
            + "; only one FileCheckpointStore may use a directory at a time, close the other first");
  }

  private static long pid() {
    return ProcessHandle.current().pid();
  }

  private static void closeQuietly(FileChannel channel) {
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException ignored) {
        // already failing; the original error is more useful
      }
    }
  }
}
