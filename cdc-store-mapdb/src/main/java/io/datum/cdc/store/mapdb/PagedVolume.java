package io.datum.cdc.store.mapdb;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;
import org.mapdb.DBException;
import org.mapdb.DataInput2;
import org.mapdb.volume.Volume;

/**
 * The MapDB {@link Volume} the store runs MapDB's {@code StoreDirect} on: a page cache in front of
 * MapDB's own file volume, which turns every {@link #sync()} (every {@code DB.commit()}) into an
 * atomic, durable commit.
 *
 * <p>Writes only change cached 4 KiB pages and mark them dirty; the file is not touched between
 * commits; pages read are cached too (at most {@link #MAX_CACHED_PAGES} after a commit). {@link
 * #sync()} then, with a {@link RedoLog}:
 *
 * <ol>
 *   <li>writes every dirty page to the redo log and fsyncs it;
 *   <li>writes the pages into the data file (growing it first if needed);
 *   <li>fsyncs (or, memory-mapped, msyncs) the data file.
 * </ol>
 *
 * <p>A crash before step 1 completes leaves the data file at the previous commit and a torn redo
 * record, which is ignored; a crash after it leaves a complete redo record, which the next open
 * applies again ({@link #replay}). So the data file always reopens at one commit or the next, never
 * in between. Without a redo log, {@link #sync()} does steps 2 and 3 only, and a crash during step
 * 2 can leave the file torn.
 *
 * <p>This replaces MapDB 3.1.0's own write-ahead log ({@code DBMaker.transactionEnable()}), which
 * is not crash-safe: {@code StoreWAL.commit()} fsyncs the log and then updates the data file in
 * place, but nothing in MapDB 3.1.0 ever replays the log on open, so a crash during the in-place
 * update leaves a broken file.
 *
 * <p>If a commit fails after the data file was touched, the volume refuses further commits; the
 * redo log, still complete, repairs the file on the next open. {@link #close()} drops uncommitted
 * pages (it commits nothing). Thread-safe: every method is synchronized.
 */
final class PagedVolume extends Volume {

  /** Bytes per page, the unit of caching, of the redo log and of writes into the file. */
  static final int PAGE_SIZE = 4096;

  private static final int PAGE_SHIFT = 12;
  private static final long PAGE_MASK = PAGE_SIZE - 1;

  /**
   * How many pages the cache keeps after a commit, 8 MiB. A store of ordinary checkpoints stays
   * within the 2 MiB MapDB starts with, so the cache holds the whole file; MapDB's allocator lets
   * the file grow when values of tens of kilobytes change size often, and then the cache is dropped
   * after a commit that leaves it above this size.
   */
  static final int MAX_CACHED_PAGES = 2048;

  /** Points inside {@link #sync()}, for tests that crash the process there. */
  interface CommitHooks {
    /** No hooks. */
    CommitHooks NONE = new CommitHooks() {};

    /** After the redo record is durable, before the data file is touched. */
    default void redoWritten() {}

    /**
     * Before page {@code n} (0-based, in ascending file order) of a commit is written to the file.
     *
     * @param n the page's number within the commit
     */
    default void beforePageWrite(int n) {}

    /** After all pages were written to the file, before it is synced. */
    default void beforeFileSync() {}
  }

  private final Volume file;
  private final RedoLog redo;
  private final CommitHooks hooks;
  private final Map<Long, byte[]> pages = new HashMap<>();
  private final TreeSet<Long> dirty = new TreeSet<>();
  private long fileLength;
  private long length;
  private RuntimeException failure;
  private long commits;

  /**
   * Wraps MapDB's file volume.
   *
   * @param file the data file's volume, open and locked
   * @param redo the redo log, or null to write commits straight into the file (not crash-safe)
   * @param hooks crash points for tests, {@link CommitHooks#NONE} otherwise
   */
  PagedVolume(Volume file, RedoLog redo, CommitHooks hooks) {
    this.file = file;
    this.redo = redo;
    this.hooks = hooks;
    this.fileLength = file.length();
    this.length = roundUp(fileLength);
  }

  /**
   * Applies a complete redo record to a data file and syncs it, as the first step of opening.
   *
   * @param file the data file's volume
   * @param record the record
   */
  static void replay(Volume file, RedoLog.Record record) {
    if (record.length() > file.length()) {
      file.ensureAvailable(record.length());
    }
    for (int i = 0; i < record.indexes().length; i++) {
      file.putData(record.indexes()[i] << PAGE_SHIFT, record.pages()[i], 0, PAGE_SIZE);
    }
    file.sync();
  }

  /** Returns how many commits wrote pages, for tests. */
  synchronized long commits() {
    return commits;
  }

  // ------------------------------------------------------------------------------ commit

  /**
   * Commits the dirty pages atomically (see the class description) and returns once they are
   * durable. Does nothing if no page is dirty.
   *
   * @throws DBException.VolumeIOError if the commit failed; if the data file was already touched,
   *     every later call fails too
   */
  @Override
  public synchronized void sync() {
    if (closed.get()) {
      throw new DBException.VolumeClosed("volume of " + getFile() + " is closed");
    }
    if (failure != null) {
      throw new DBException.VolumeIOError(
          "an earlier commit to "
              + getFile()
              + " failed while writing the file; reopen the store to"
              + " repair it from "
              + (redo == null ? "(no redo log)" : redo.path()),
          failure);
    }
    if (dirty.isEmpty() && length <= fileLength) {
      return;
    }
    long[] indexes = new long[dirty.size()];
    byte[][] data = new byte[dirty.size()][];
    int n = 0;
    for (long index : dirty) {
      indexes[n] = index;
      data[n++] = pages.get(index);
    }
    if (redo != null) {
      try {
        redo.write(length, indexes, data);
      } catch (IOException e) {
        // the data file is untouched: a later commit may try again with a superset of the pages
        throw new DBException.VolumeIOError("cannot write redo log " + redo.path() + ": " + e, e);
      }
      hooks.redoWritten();
    }
    try {
      if (length > fileLength) {
        file.ensureAvailable(length);
      }
      for (int i = 0; i < indexes.length; i++) {
        hooks.beforePageWrite(i);
        file.putData(indexes[i] << PAGE_SHIFT, data[i], 0, PAGE_SIZE);
      }
      hooks.beforeFileSync();
      file.sync();
    } catch (RuntimeException e) {
      failure = e;
      throw new DBException.VolumeIOError(
          "cannot write " + indexes.length + " page(s) to " + getFile() + ": " + e, e);
    }
    fileLength = Math.max(length, file.length());
    length = Math.max(length, roundUp(fileLength));
    dirty.clear();
    commits++;
    if (pages.size() > MAX_CACHED_PAGES) {
      pages.clear(); // every page is clean now: reread from the file when needed
    }
  }

  /** Returns how many pages are cached, for tests. */
  synchronized int cachedPages() {
    return pages.size();
  }

  /** Drops uncommitted pages and closes the file volume (releasing MapDB's lock on it). */
  @Override
  public synchronized void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    pages.clear();
    dirty.clear();
    file.close();
  }

  // ------------------------------------------------------------------------------ pages

  private byte[] page(long index) {
    byte[] page = pages.get(index);
    if (page == null) {
      page = new byte[PAGE_SIZE];
      long offset = index << PAGE_SHIFT;
      if (offset < fileLength) {
        file.getData(offset, page, 0, (int) Math.min(PAGE_SIZE, fileLength - offset));
      }
      pages.put(index, page);
    }
    return page;
  }

  private void check(long offset, long size) {
    if (closed.get()) {
      throw new DBException.VolumeClosed("volume of " + getFile() + " is closed");
    }
    if (offset < 0 || size < 0 || offset + size > length) {
      throw new DBException.VolumeEOF(
          "access to ["
              + offset
              + ", "
              + (offset + size)
              + ") beyond the end ("
              + length
              + ") of "
              + getFile());
    }
  }

  private void read(long offset, byte[] dst, int pos, int size) {
    check(offset, size);
    while (size > 0) {
      int in = (int) (offset & PAGE_MASK);
      int n = Math.min(size, PAGE_SIZE - in);
      System.arraycopy(page(offset >>> PAGE_SHIFT), in, dst, pos, n);
      offset += n;
      pos += n;
      size -= n;
    }
  }

  private void write(long offset, byte[] src, int pos, int size) {
    check(offset, size);
    while (size > 0) {
      int in = (int) (offset & PAGE_MASK);
      int n = Math.min(size, PAGE_SIZE - in);
      long index = offset >>> PAGE_SHIFT;
      System.arraycopy(src, pos, page(index), in, n);
      dirty.add(index);
      offset += n;
      pos += n;
      size -= n;
    }
  }

  private static long roundUp(long size) {
    return (size + PAGE_MASK) & ~PAGE_MASK;
  }

  // ------------------------------------------------------------------------------ Volume

  /** Grows the logical size; the file grows at the next commit. */
  @Override
  public synchronized void ensureAvailable(long offset) {
    if (offset > length) {
      length = roundUp(offset);
    }
  }

  /** Not supported: the store never compacts. */
  @Override
  public void truncate(long size) {
    throw new UnsupportedOperationException("the checkpoint store's volume cannot be truncated");
  }

  @Override
  public synchronized void putLong(long offset, long value) {
    byte[] b = new byte[8];
    for (int i = 7; i >= 0; i--) {
      b[i] = (byte) value;
      value >>>= 8;
    }
    write(offset, b, 0, 8);
  }

  @Override
  public synchronized void putInt(long offset, int value) {
    write(
        offset,
        new byte[] {
          (byte) (value >>> 24), (byte) (value >>> 16), (byte) (value >>> 8), (byte) value
        },
        0,
        4);
  }

  @Override
  public synchronized void putByte(long offset, byte value) {
    write(offset, new byte[] {value}, 0, 1);
  }

  @Override
  public synchronized void putData(long offset, byte[] src, int srcPos, int srcSize) {
    write(offset, src, srcPos, srcSize);
  }

  @Override
  public synchronized void putData(long offset, ByteBuffer buf) {
    byte[] b = new byte[buf.remaining()];
    buf.get(b);
    write(offset, b, 0, b.length);
  }

  @Override
  public synchronized long getLong(long offset) {
    byte[] b = new byte[8];
    read(offset, b, 0, 8);
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = v << 8 | (b[i] & 0xFF);
    }
    return v;
  }

  @Override
  public synchronized int getInt(long offset) {
    byte[] b = new byte[4];
    read(offset, b, 0, 4);
    return (b[0] & 0xFF) << 24 | (b[1] & 0xFF) << 16 | (b[2] & 0xFF) << 8 | (b[3] & 0xFF);
  }

  @Override
  public synchronized byte getByte(long offset) {
    check(offset, 1);
    return page(offset >>> PAGE_SHIFT)[(int) (offset & PAGE_MASK)];
  }

  @Override
  public synchronized DataInput2 getDataInput(long offset, int size) {
    check(offset, size); // before allocating: a damaged file may ask for a huge record
    byte[] b = new byte[size];
    read(offset, b, 0, size);
    return new DataInput2.ByteArray(b);
  }

  @Override
  public synchronized void getData(long offset, byte[] bytes, int bytesPos, int size) {
    read(offset, bytes, bytesPos, size);
  }

  @Override
  public synchronized void clear(long startOffset, long endOffset) {
    byte[] zeros = new byte[(int) Math.min(PAGE_SIZE, Math.max(0, endOffset - startOffset))];
    for (long at = startOffset; at < endOffset; ) {
      int n = (int) Math.min(zeros.length, endOffset - at);
      write(at, zeros, 0, n);
      at += n;
    }
  }

  @Override
  public int sliceSize() {
    return 0;
  }

  @Override
  public boolean isSliced() {
    return false;
  }

  @Override
  public synchronized long length() {
    return length;
  }

  @Override
  public boolean isReadOnly() {
    return false;
  }

  @Override
  public File getFile() {
    return file.getFile();
  }

  @Override
  public boolean getFileLocked() {
    return file.getFileLocked();
  }

  @Override
  public boolean fileLoad() {
    return false;
  }
}
