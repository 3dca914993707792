package io.datum.cdc.spi;

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
 * Exclusive use of a store's files: an OS lock ({@link FileChannel#tryLock()}) on a lock file,
 * which excludes other processes and is released by the OS when the process dies, plus a JVM-wide
 * registry of held lock files, which excludes other stores of this JVM.
 *
 * <p>The registry is checked before the lock file is opened, because on POSIX systems closing any
 * descriptor of a file releases every lock the process holds on it (see {@link FileLock}): a second
 * open that fails must not even open the lock file, or it would unlock the first store. The lock
 * file holds the owner's process id, for the message another process gets, and stays after {@link
 * #release()} (deleting it would race with a process about to lock it).
 *
 * <p>Thread-safe. Used by the {@code file:}, {@code rocksdb:} and {@code mapdb:} stores through
 * {@link AbstractCheckpointStore}.
 */
public final class StoreLock {

  /** Lock files (absolute, parent directory resolved to its real path) held in this JVM. */
  private static final Set<Path> HELD = ConcurrentHashMap.newKeySet();

  private final Path key;
  private final FileChannel channel;
  private final FileLock lock;

  private StoreLock(Path key, FileChannel channel, FileLock lock) {
    this.key = key;
    this.channel = channel;
    this.lock = lock;
  }

  /**
   * Takes the lock, creating the lock file if needed, and writes this process's id into it.
   *
   * @param lockFile the lock file; its directory must exist
   * @param store the store, for messages, such as {@code "file checkpoint store /var/lib/cdc"}
   * @return the held lock; {@link #release()} it when the store closes
   * @throws CdcStoreException {@code "<store> is in use by another process or store: ..."} naming
   *     the lock file and, when known, the holder's process id, if a store of this JVM or another
   *     process holds it; or naming the lock file if it cannot be created, read or locked
   */
  public static StoreLock acquire(Path lockFile, String store) {
    Path key;
    try {
      Path absolute = lockFile.toAbsolutePath();
      key = absolute.getParent().toRealPath().resolve(absolute.getFileName());
    } catch (IOException e) {
      throw new CdcStoreException(
          "cannot read the directory of lock file " + lockFile + ": " + StoreFiles.describe(e), e);
    }
    if (!HELD.add(key)) {
      throw inUse(store, key, "another store of this JVM (process " + pid() + ")");
    }
    FileChannel channel = null;
    try {
      channel =
          FileChannel.open(
              key, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
      FileLock lock;
      try {
        lock = channel.tryLock();
      } catch (OverlappingFileLockException e) {
        // locked in this JVM by something other than a StoreLock: closing would release that lock
        channel = null; // (POSIX), so the channel stays open for the life of the JVM
        throw inUse(store, key, "this JVM (process " + pid() + "), not through StoreLock");
      }
      if (lock == null) {
        throw inUse(store, key, holder(channel));
      }
      channel.truncate(0);
      channel.write(ByteBuffer.wrap((pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
      return new StoreLock(key, channel, lock);
    } catch (IOException e) {
      CdcStoreException failure =
          new CdcStoreException(
              "cannot lock " + key + " for " + store + ": " + StoreFiles.describe(e), e);
      forget(key, channel, failure);
      throw failure;
    } catch (RuntimeException | Error e) {
      forget(key, channel, e);
      throw e;
    }
  }

  /** Undoes a failed {@link #acquire}: closes the channel and removes the registry entry. */
  private static void forget(Path key, FileChannel channel, Throwable failure) {
    HELD.remove(key);
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException suppressed) {
        failure.addSuppressed(suppressed);
      }
    }
  }

  /**
   * Returns the lock file.
   *
   * @return its absolute path, directory resolved to its real path
   */
  public Path file() {
    return key;
  }

  /**
   * Releases the lock; afterwards another store may take it. Call once.
   *
   * @throws IOException if the lock or the file cannot be released (this JVM's registry forgets the
   *     lock anyway)
   */
  public void release() throws IOException {
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

  private static String holder(FileChannel channel) {
    try {
      ByteBuffer buffer = ByteBuffer.allocate(32);
      channel.read(buffer, 0);
      String text =
          new String(buffer.array(), 0, buffer.position(), StandardCharsets.US_ASCII).trim();
      return text.matches("[0-9]{1,19}") ? "process " + text : "another process";
    } catch (IOException e) {
      return "another process (its id is unreadable: " + e + ")";
    }
  }

  private static CdcStoreException inUse(String store, Path lockFile, String holder) {
    return new CdcStoreException(
        store
            + " is in use by another process or store: "
            + holder
            + " holds the lock on "
            + lockFile
            + "; a store can be open only once at a time, close the other first");
  }

  private static long pid() {
    return ProcessHandle.current().pid();
  }
}
