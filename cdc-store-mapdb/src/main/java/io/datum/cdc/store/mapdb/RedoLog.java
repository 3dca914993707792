package io.datum.cdc.store.mapdb;

import io.datum.cdc.spi.StoreFiles;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * The redo log of a MapDB checkpoint file, {@code <file>.redo}: the pages of the last commit, made
 * durable before any of them is written into the data file.
 *
 * <p>It holds one record, overwritten in place by every commit:
 *
 * <pre>
 * bytes   magic            "DCMREDO1"
 * i64     sequence         commit number within one open of the store, for diagnostics
 * i64     length           the data file's length after the commit
 * i32     page size        {@link PagedVolume#PAGE_SIZE}
 * i32     page count
 * per page: i64 page index, then page-size bytes
 * u32     CRC32C           of every byte before it
 * </pre>
 *
 * <p>A record that is incomplete or fails its checksum was torn by a crash while it was written;
 * the data file was then not yet touched by that commit, so the record is ignored. A complete
 * record may or may not have been applied to the data file; applying it again is harmless, since it
 * holds whole pages, so {@link #read} returns it and the store re-applies it on open. A cleanly
 * closed store deletes the file.
 *
 * <p>The log is written through {@link RandomAccessFile}, not a {@code FileChannel}: an interrupt
 * of a thread blocked in a {@code FileChannel} operation closes the channel, which would break the
 * store for every later commit.
 */
final class RedoLog implements AutoCloseable {

  private static final byte[] MAGIC = {'D', 'C', 'M', 'R', 'E', 'D', 'O', '1'};
  private static final int HEADER = MAGIC.length + 8 + 8 + 4 + 4;

  /** Sanity bound on a recorded file length: 1 TiB, far above any checkpoint store. */
  private static final long MAX_LENGTH = 1L << 40;

  private final Path path;
  private final RandomAccessFile file;
  private long sequence;

  private RedoLog(Path path, RandomAccessFile file) {
    this.path = path;
    this.file = file;
  }

  /** Returns the redo log path of a data file: {@code <file>.redo}. */
  static Path pathOf(Path file) {
    return file.resolveSibling(file.getFileName() + ".redo");
  }

  /**
   * Opens (creating if missing) the redo log for writing; fsyncs the directory if it was created.
   *
   * @param path the redo log path
   * @return the log
   * @throws IOException if it cannot be opened, or its new directory entry cannot be synced
   */
  static RedoLog open(Path path) throws IOException {
    boolean existed = Files.exists(path);
    RandomAccessFile file = new RandomAccessFile(path.toFile(), "rw");
    try {
      if (!existed) {
        StoreFiles.forceDirectory(path.getParent());
      }
    } catch (IOException e) {
      file.close();
      throw e;
    }
    return new RedoLog(path, file);
  }

  /** Returns the log's path. */
  Path path() {
    return path;
  }

  /**
   * Writes a record over the previous one and forces it to stable storage (fsync).
   *
   * @param length the data file's length after the commit
   * @param indexes the page indexes
   * @param pages the page contents, each {@link PagedVolume#PAGE_SIZE} bytes
   * @throws IOException if writing or syncing fails
   */
  void write(long length, long[] indexes, byte[][] pages) throws IOException {
    int size = HEADER + indexes.length * (8 + PagedVolume.PAGE_SIZE) + 4;
    ByteBuffer buffer = ByteBuffer.allocate(size);
    buffer
        .put(MAGIC)
        .putLong(++sequence)
        .putLong(length)
        .putInt(PagedVolume.PAGE_SIZE)
        .putInt(indexes.length);
    for (int i = 0; i < indexes.length; i++) {
      buffer.putLong(indexes[i]).put(pages[i], 0, PagedVolume.PAGE_SIZE);
    }
    CRC32C crc = new CRC32C();
    crc.update(buffer.array(), 0, size - 4);
    buffer.putInt((int) crc.getValue());
    file.seek(0);
    file.write(buffer.array(), 0, size);
    file.getFD().sync();
  }

  /** Closes the log; the file stays. */
  @Override
  public void close() throws IOException {
    file.close();
  }

  /** A complete record read back. */
  record Record(long sequence, long length, long[] indexes, byte[][] pages) {}

  /**
   * Reads the record of a redo log, if there is a complete one.
   *
   * @param path the redo log path
   * @return the record; null if the file does not exist, or holds no complete record (torn)
   * @throws IOException if the file exists but cannot be read
   */
  static Record read(Path path) throws IOException {
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(path);
    } catch (NoSuchFileException e) {
      return null;
    }
    if (bytes.length < HEADER + 4) {
      return null;
    }
    ByteBuffer in = ByteBuffer.wrap(bytes);
    byte[] magic = new byte[MAGIC.length];
    in.get(magic);
    if (!java.util.Arrays.equals(magic, MAGIC)) {
      return null;
    }
    long sequence = in.getLong();
    long length = in.getLong();
    int pageSize = in.getInt();
    int count = in.getInt();
    if (pageSize != PagedVolume.PAGE_SIZE
        || count < 0
        || length < 0
        || length > MAX_LENGTH
        || (long) count * (8 + pageSize) > bytes.length - HEADER - 4) {
      return null;
    }
    int size = HEADER + count * (8 + pageSize) + 4;
    CRC32C crc = new CRC32C();
    crc.update(bytes, 0, size - 4);
    if ((int) crc.getValue() != ByteBuffer.wrap(bytes, size - 4, 4).getInt()) {
      return null;
    }
    long[] indexes = new long[count];
    byte[][] pages = new byte[count][];
    for (int i = 0; i < count; i++) {
      indexes[i] = in.getLong();
      if (indexes[i] < 0 || (indexes[i] + 1) * pageSize > length) {
        return null; // checksummed yet inconsistent: not a record this class wrote
      }
      pages[i] = new byte[pageSize];
      in.get(pages[i]);
    }
    return new Record(sequence, length, indexes, pages);
  }
}
