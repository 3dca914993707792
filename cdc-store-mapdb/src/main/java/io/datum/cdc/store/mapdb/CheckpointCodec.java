package io.datum.cdc.store.mapdb;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SlotNames;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The binary form of one slot's checkpoint, the value the MapDB map holds under the slot's name.
 *
 * <p>Format 1, all integers big-endian, {@code varint} an unsigned LEB128 number of at most 5 bytes
 * whose value fits in 31 bits:
 *
 * <pre>
 * u8      format            1
 * u8      slot length       1..63
 * bytes   slot              ASCII [a-z0-9_]
 * i64     watermark         unsigned LSN
 * varint  transaction count
 * per transaction, ascending txEndLsn, all after the watermark:
 *   i64     txEndLsn
 *   varint  eventCount      at least 1
 *   varint  range count
 *   per range of consecutive acknowledged event indexes, ascending:
 *     varint  gap           first index minus the end (exclusive) of the previous range, or
 *                           minus 0 for the first range; at least 1 after the first range
 *     varint  length - 1    the range covers [first, first + length)
 * u32     CRC32C            of every byte before it
 * </pre>
 *
 * <p>A checkpoint with only a watermark takes 1 + 1 + slot + 8 + 1 + 4 bytes (29 for a 14-character
 * slot). Decoding is strict: a wrong checksum, an unknown format, a slot other than the key, a
 * range outside {@code [0, eventCount)}, overlapping or touching ranges, an overlong varint or
 * trailing bytes all count as corruption.
 */
final class CheckpointCodec {

  /** The only format this class writes and reads. */
  static final int FORMAT = 1;

  private static final int CRC_LENGTH = 4;

  private CheckpointCodec() {}

  /**
   * Encodes a checkpoint.
   *
   * @param checkpoint the checkpoint, not null
   * @return the value to store
   */
  static byte[] encode(CdcCheckpoint checkpoint) {
    Writer out = new Writer();
    byte[] slot = checkpoint.slot().getBytes(StandardCharsets.US_ASCII);
    out.write(FORMAT);
    out.write(slot.length);
    out.write(slot, 0, slot.length);
    out.writeLong(checkpoint.watermark().asLong());
    out.writeVarint(checkpoint.acknowledgedBeyond().size());
    for (PartialTransaction tx : checkpoint.acknowledgedBeyond()) {
      out.writeLong(tx.txEndLsn().asLong());
      out.writeVarint(tx.eventCount());
      int[] ranges = tx.acknowledgedRanges(); // half-open pairs
      out.writeVarint(ranges.length / 2);
      int previousEnd = 0;
      for (int r = 0; r < ranges.length; r += 2) {
        out.writeVarint(ranges[r] - previousEnd);
        out.writeVarint(ranges[r + 1] - ranges[r] - 1);
        previousEnd = ranges[r + 1];
      }
    }
    CRC32C crc = new CRC32C();
    crc.update(out.buffer(), 0, out.size());
    out.writeInt((int) crc.getValue());
    return out.toByteArray();
  }

  /**
   * Decodes a stored value.
   *
   * @param value the stored bytes
   * @param slot the key the value was stored under, a valid slot name
   * @param file the store's file, for messages
   * @return the checkpoint
   * @throws CdcStoreException naming the file and the slot if the value is not a well-formed
   *     format-1 checkpoint of {@code slot}
   */
  static CdcCheckpoint decode(byte[] value, String slot, Path file) {
    if (value == null) {
      throw corrupt(file, slot, "the value is null", null);
    }
    if (value.length < 1 + 1 + 8 + 1 + CRC_LENGTH) {
      throw corrupt(file, slot, "the value is truncated (" + value.length + " bytes)", null);
    }
    int body = value.length - CRC_LENGTH;
    CRC32C crc = new CRC32C();
    crc.update(value, 0, body);
    int stored = Reader.readInt(value, body);
    if ((int) crc.getValue() != stored) {
      throw corrupt(
          file,
          slot,
          String.format(
              "checksum mismatch (stored %08x, computed %08x over %d bytes)",
              stored, (int) crc.getValue(), body),
          null);
    }
    Reader in = new Reader(value, body);
    try {
      int format = in.readByte();
      if (format != FORMAT) {
        throw new IllegalArgumentException(
            "unsupported format " + format + "; this version reads format " + FORMAT);
      }
      int slotLength = in.readByte();
      String storedSlot = new String(in.readBytes(slotLength), StandardCharsets.US_ASCII);
      if (!storedSlot.equals(slot)) {
        throw new IllegalArgumentException(
            "it belongs to slot "
                + (SlotNames.isValid(storedSlot) ? '"' + storedSlot + '"' : "(invalid name)")
                + ", but is stored under \""
                + slot
                + '"');
      }
      PgLsn watermark = PgLsn.of(in.readLong());
      int count = in.readVarint("transaction count");
      List<PartialTransaction> txs = new ArrayList<>(Math.min(count, 1024));
      for (int t = 0; t < count; t++) {
        PgLsn end = PgLsn.of(in.readLong());
        int eventCount = in.readVarint("event count");
        if (eventCount < 1) {
          throw new IllegalArgumentException(
              "transaction " + end + " has event count " + eventCount);
        }
        int rangeCount = in.readVarint("range count");
        if (rangeCount > in.remaining()) {
          throw new IllegalArgumentException(
              "transaction "
                  + end
                  + ": range count "
                  + rangeCount
                  + " exceeds the "
                  + in.remaining()
                  + " remaining bytes");
        }
        int[] ranges = new int[rangeCount * 2];
        long previousEnd = 0;
        for (int r = 0; r < rangeCount; r++) {
          long gap = in.readVarint("range gap");
          if (r > 0 && gap < 1) {
            throw new IllegalArgumentException(
                "transaction " + end + ": range " + r + " touches or overlaps the range before it");
          }
          long from = previousEnd + gap;
          long to = from + in.readVarint("range length") + 1L; // exclusive
          if (to > eventCount) {
            throw new IllegalArgumentException(
                "transaction "
                    + end
                    + ": acknowledged range ["
                    + from
                    + ", "
                    + to
                    + ") is outside [0, "
                    + eventCount
                    + ")");
          }
          ranges[2 * r] = (int) from;
          ranges[2 * r + 1] = (int) to;
          previousEnd = to;
        }
        txs.add(PartialTransaction.ofRanges(end, eventCount, ranges));
      }
      if (in.remaining() != 0) {
        throw new IllegalArgumentException(in.remaining() + " unexpected trailing bytes");
      }
      return new CdcCheckpoint(slot, watermark, txs);
    } catch (IllegalArgumentException e) { // also from the CdcCheckpoint constructors
      throw corrupt(file, slot, e.getMessage(), e);
    }
  }

  /**
   * Encodes the list of slots that have a checkpoint, the store's manifest: u8 format 1, varint
   * count, per slot (ascending) u8 length and ASCII name, u32 CRC32C of every byte before it.
   *
   * @param slots valid slot names
   * @return the manifest value
   */
  static byte[] encodeSlots(java.util.SortedSet<String> slots) {
    Writer out = new Writer();
    out.write(FORMAT);
    out.writeVarint(slots.size());
    for (String slot : slots) {
      byte[] name = slot.getBytes(StandardCharsets.US_ASCII);
      out.write(name.length);
      out.write(name, 0, name.length);
    }
    CRC32C crc = new CRC32C();
    crc.update(out.buffer(), 0, out.size());
    out.writeInt((int) crc.getValue());
    return out.toByteArray();
  }

  /**
   * Decodes the manifest.
   *
   * @param value the stored manifest
   * @param file the store's file, for messages
   * @return the slot names, sorted
   * @throws CdcStoreException naming the file if the manifest is missing or damaged
   */
  static java.util.SortedSet<String> decodeSlots(byte[] value, Path file) {
    String what = "corrupt mapdb checkpoint store " + file + ": its list of slots ";
    if (value == null || value.length < 1 + 1 + CRC_LENGTH) {
      throw new CdcStoreException(what + "is missing or truncated");
    }
    int body = value.length - CRC_LENGTH;
    CRC32C crc = new CRC32C();
    crc.update(value, 0, body);
    if ((int) crc.getValue() != Reader.readInt(value, body)) {
      throw new CdcStoreException(what + "fails its checksum");
    }
    Reader in = new Reader(value, body);
    try {
      if (in.readByte() != FORMAT) {
        throw new IllegalArgumentException("unsupported format");
      }
      int count = in.readVarint("slot count");
      java.util.TreeSet<String> slots = new java.util.TreeSet<>();
      for (int i = 0; i < count; i++) {
        String slot = new String(in.readBytes(in.readByte()), StandardCharsets.US_ASCII);
        if (!SlotNames.isValid(slot) || !slots.add(slot)) {
          throw new IllegalArgumentException("invalid or repeated slot name");
        }
      }
      if (in.remaining() != 0) {
        throw new IllegalArgumentException(in.remaining() + " unexpected trailing bytes");
      }
      return java.util.Collections.unmodifiableSortedSet(slots);
    } catch (IllegalArgumentException e) {
      throw new CdcStoreException(what + "is malformed: " + e.getMessage(), e);
    }
  }

  private static CdcStoreException corrupt(Path file, String slot, String why, Throwable cause) {
    return new CdcStoreException(
        "corrupt checkpoint of slot \""
            + slot
            + "\" in mapdb checkpoint store "
            + file
            + ": "
            + why,
        cause);
  }

  /** A growable byte buffer. */
  private static final class Writer extends ByteArrayOutputStream {
    Writer() {
      super(64);
    }

    byte[] buffer() {
      return buf;
    }

    void writeLong(long v) {
      writeInt((int) (v >>> 32));
      writeInt((int) v);
    }

    void writeInt(int v) {
      write(v >>> 24);
      write(v >>> 16);
      write(v >>> 8);
      write(v);
    }

    void writeVarint(int v) {
      if (v < 0) {
        throw new IllegalArgumentException("negative varint " + v);
      }
      while ((v & ~0x7F) != 0) {
        write((v & 0x7F) | 0x80);
        v >>>= 7;
      }
      write(v);
    }
  }

  /** Reads a byte array up to a limit; throws IllegalArgumentException when it runs out. */
  private static final class Reader {
    private final byte[] bytes;
    private final int limit;
    private int position;

    Reader(byte[] bytes, int limit) {
      this.bytes = bytes;
      this.limit = limit;
    }

    int remaining() {
      return limit - position;
    }

    private void need(int n, String what) {
      if (n > remaining()) {
        throw new IllegalArgumentException(
            "the value ends inside " + what + " at byte " + position + " of " + limit);
      }
    }

    int readByte() {
      need(1, "a byte");
      return bytes[position++] & 0xFF;
    }

    byte[] readBytes(int n) {
      need(n, "the slot name");
      byte[] out = java.util.Arrays.copyOfRange(bytes, position, position + n);
      position += n;
      return out;
    }

    long readLong() {
      need(8, "an LSN");
      long hi = readInt(bytes, position) & 0xFFFFFFFFL;
      long lo = readInt(bytes, position + 4) & 0xFFFFFFFFL;
      position += 8;
      return hi << 32 | lo;
    }

    int readVarint(String what) {
      long value = 0;
      for (int shift = 0; shift < 35; shift += 7) {
        need(1, "the " + what);
        int b = bytes[position++] & 0xFF;
        value |= (long) (b & 0x7F) << shift;
        if ((b & 0x80) == 0) {
          if (value > Integer.MAX_VALUE || (b == 0 && shift > 0)) {
            throw new IllegalArgumentException("malformed " + what + " ending at byte " + position);
          }
          return (int) value;
        }
      }
      throw new IllegalArgumentException(
          "the " + what + " is longer than 5 bytes at byte " + position);
    }

    static int readInt(byte[] b, int at) {
      return (b[at] & 0xFF) << 24
          | (b[at + 1] & 0xFF) << 16
          | (b[at + 2] & 0xFF) << 8
          | (b[at + 3] & 0xFF);
    }
  }
}
