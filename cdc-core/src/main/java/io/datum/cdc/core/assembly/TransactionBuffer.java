package io.datum.cdc.core.assembly;

import io.datum.cdc.CdcException;
import io.datum.cdc.core.relation.RelationInfo;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The undecoded change messages of one transaction, in arrival order, until it commits or aborts:
 * in memory while the source's {@link Memory} budget allows, then in a temporary spill file (every
 * record so far, and every later one). Changes of a subtransaction can be dropped when it aborts
 * (Stream Abort of a subtransaction); a spilled record of an aborted subtransaction is skipped on
 * replay. Records are read back once, in order, by {@link #replay}.
 *
 * <p>The spill file is unlinked right after it is created and used through its open channel, so it
 * disappears with the process even after a SIGKILL (where the file system cannot unlink an open
 * file, it is deleted when closed instead).
 *
 * <p>Spill record: {@code subxid i64, lsn i64, hasXid i8, relation count i16, relation indexes
 * i32..., length i32, message bytes}; relations are kept in memory (a transaction refers to few).
 *
 * <p>Used by the replication thread only.
 */
public final class TransactionBuffer implements AutoCloseable {

  /** Bytes counted per buffered message on top of its own length (record and buffer objects). */
  static final int OVERHEAD = 64;

  /** The memory budget shared by every buffer of one source. */
  public static final class Memory {
    private final long budget;
    private final Path spillDirectory;
    private long used;
    private volatile long spilledFiles;
    private volatile long spilledBytes;

    /**
     * @param budget bytes of buffered messages (plus {@link #OVERHEAD} each) held in memory before
     *     a buffer spills
     * @param spillDirectory where spill files are created
     */
    public Memory(long budget, Path spillDirectory) {
      this.budget = budget;
      this.spillDirectory = spillDirectory;
    }

    long used() {
      return used;
    }

    /** Returns how many buffers spilled to disk so far. */
    long spilledFiles() {
      return spilledFiles;
    }

    /** Returns the bytes written to spill files so far (records with their framing). */
    long spilledBytes() {
      return spilledBytes;
    }
  }

  private record Change(
      ByteBuffer message, boolean hasXid, RelationInfo[] relations, long subxid, long lsn) {}

  private final Memory memory;
  private final String description;
  private List<Change> changes = new ArrayList<>();
  private long bytesInMemory;
  private int count;

  /** Changes per subtransaction, kept only for subtransactions other than 0 (streamed ones). */
  private final Map<Long, Integer> countBySubxid = new HashMap<>();

  private final Set<Long> abortedSubxids = new HashSet<>();

  private Path spillFile;
  private FileChannel spillChannel;
  private boolean unlinked;
  private DataOutputStream spillOut;
  private final List<RelationInfo> spilledRelations = new ArrayList<>();
  private final Map<RelationInfo, Integer> spilledRelationIndex = new IdentityHashMap<>();

  /**
   * @param memory the source's budget
   * @param description for errors and file names, e.g. {@code "xid 741"}
   */
  TransactionBuffer(Memory memory, String description) {
    this.memory = memory;
    this.description = description;
  }

  /** Returns the number of changes that will be replayed (aborted subtransactions excluded). */
  int count() {
    return count;
  }

  /** Returns true once the buffer went to disk. */
  boolean spilled() {
    return spillFile != null;
  }

  /**
   * Appends a change message.
   *
   * @param message the undecoded message; kept, not copied, while in memory
   * @param hasXid whether it came in a stream block
   * @param relations its relations at arrival
   * @param subxid the (sub)transaction that made it inside a stream block, else 0
   * @param lsn the WAL start of the XLogData message that carried it (the change's LSN)
   * @throws CdcException if the spill file cannot be written
   */
  void add(ByteBuffer message, boolean hasXid, RelationInfo[] relations, long subxid, long lsn) {
    count++;
    if (subxid != 0) {
      countBySubxid.merge(subxid, 1, Integer::sum);
    }
    if (spillOut != null) {
      write(new Change(message, hasXid, relations, subxid, lsn));
      return;
    }
    changes.add(new Change(message, hasXid, relations, subxid, lsn));
    long size = message.remaining() + OVERHEAD;
    bytesInMemory += size;
    memory.used += size;
    if (memory.used > memory.budget) {
      spill();
    }
  }

  /**
   * Drops the changes of an aborted subtransaction.
   *
   * @param subxid the subtransaction; unknown ones are ignored (it made no published change)
   */
  void abortSubtransaction(long subxid) {
    Integer dropped = countBySubxid.remove(subxid);
    if (dropped == null) {
      return;
    }
    count -= dropped;
    if (spillOut != null) {
      abortedSubxids.add(subxid);
      return;
    }
    List<Change> kept = new ArrayList<>(changes.size() - dropped);
    for (Change c : changes) {
      if (c.subxid() == subxid) {
        long size = c.message().remaining() + OVERHEAD;
        bytesInMemory -= size;
        memory.used -= size;
      } else {
        kept.add(c);
      }
    }
    changes = kept;
  }

  private void spill() {
    try {
      spillFile = Files.createTempFile(memory.spillDirectory, "datum-cdc-", ".spill");
      spillChannel =
          FileChannel.open(
              spillFile,
              StandardOpenOption.READ,
              StandardOpenOption.WRITE,
              StandardOpenOption.DELETE_ON_CLOSE);
      try {
        Files.delete(spillFile); // POSIX: the open channel keeps the data, nothing can leak
        unlinked = true;
      } catch (IOException stillOpen) {
        // e.g. Windows: DELETE_ON_CLOSE removes it when the channel closes
      }
      spillOut =
          new DataOutputStream(
              new BufferedOutputStream(Channels.newOutputStream(spillChannel), 1 << 16));
    } catch (IOException e) {
      throw new CdcException(
          "cannot create a spill file for "
              + description
              + " in "
              + memory.spillDirectory
              + ": "
              + e,
          e);
    }
    memory.spilledFiles++;
    for (Change c : changes) {
      write(c);
    }
    changes = null;
    memory.used -= bytesInMemory;
    bytesInMemory = 0;
  }

  private void write(Change c) {
    try {
      spillOut.writeLong(c.subxid());
      spillOut.writeLong(c.lsn());
      spillOut.writeBoolean(c.hasXid());
      spillOut.writeShort(c.relations().length);
      for (RelationInfo r : c.relations()) {
        Integer index = spilledRelationIndex.get(r);
        if (index == null) {
          index = spilledRelations.size();
          spilledRelations.add(r);
          spilledRelationIndex.put(r, index);
        }
        spillOut.writeInt(index);
      }
      ByteBuffer m = c.message();
      // one writer (the replication thread): a volatile read and write, no atomic needed
      memory.spilledBytes += 8 + 8 + 1 + 2 + 4L * c.relations().length + 4 + m.remaining();
      spillOut.writeInt(m.remaining());
      if (m.hasArray()) {
        spillOut.write(m.array(), m.arrayOffset() + m.position(), m.remaining());
      } else {
        byte[] copy = new byte[m.remaining()];
        m.duplicate().get(copy);
        spillOut.write(copy);
      }
    } catch (IOException e) {
      throw new CdcException(
          "cannot write the spill file " + spillFile + " of " + description + ": " + e, e);
    }
  }

  /** Receives replayed changes. */
  interface ChangeSink {
    /**
     * @param message the undecoded message
     * @param hasXid whether it came in a stream block
     * @param relations its relations at arrival
     * @param lsn the change's LSN
     */
    void accept(ByteBuffer message, boolean hasXid, RelationInfo[] relations, long lsn);
  }

  /** A one-pass reader of the buffered changes, in order, without aborted subtransactions. */
  final class Replay implements AutoCloseable {
    private int next;
    private DataInputStream in;

    private Replay() throws IOException {
      if (spillOut != null) {
        spillOut.flush(); // not close: that would close the channel
        spillChannel.position(0);
        in =
            new DataInputStream(
                new BufferedInputStream(Channels.newInputStream(spillChannel), 1 << 16));
      }
    }

    /**
     * Passes the next change to {@code sink}.
     *
     * @return false when there is none left
     * @throws CdcException if the spill file cannot be read
     */
    boolean next(ChangeSink sink) {
      if (in == null) {
        while (next < changes.size()) {
          Change c = changes.get(next);
          changes.set(next++, null); // let delivered messages go
          if (c.subxid() == 0 || !abortedSubxids.contains(c.subxid())) {
            sink.accept(c.message(), c.hasXid(), c.relations(), c.lsn());
            return true;
          }
        }
        return false;
      }
      try {
        while (true) {
          long subxid;
          try {
            subxid = in.readLong();
          } catch (EOFException end) {
            return false;
          }
          long lsn = in.readLong();
          boolean hasXid = in.readBoolean();
          RelationInfo[] relations = new RelationInfo[in.readUnsignedShort()];
          for (int i = 0; i < relations.length; i++) {
            relations[i] = spilledRelations.get(in.readInt());
          }
          byte[] message = new byte[in.readInt()];
          in.readFully(message);
          if (subxid == 0 || !abortedSubxids.contains(subxid)) {
            sink.accept(ByteBuffer.wrap(message), hasXid, relations, lsn);
            return true;
          }
        }
      } catch (IOException e) {
        throw new CdcException(
            "cannot read the spill file " + spillFile + " of " + description + ": " + e, e);
      }
    }

    @Override
    public void close() {
      TransactionBuffer.this.close(); // closes the channel the stream reads
    }
  }

  /**
   * Starts reading the changes back; no change may be added afterwards.
   *
   * @throws CdcException if the spill file cannot be opened
   */
  Replay replay() {
    try {
      return new Replay();
    } catch (IOException e) {
      throw new CdcException(
          "cannot read the spill file " + spillFile + " of " + description + ": " + e, e);
    }
  }

  /** Releases the memory and deletes the spill file. Idempotent. */
  @Override
  public void close() {
    memory.used -= bytesInMemory;
    bytesInMemory = 0;
    changes = List.of();
    if (spillChannel != null) {
      try {
        spillChannel.close();
        if (!unlinked) {
          Files.deleteIfExists(spillFile);
        }
      } catch (IOException e) {
        throw new CdcException("cannot delete the spill file " + spillFile + ": " + e, e);
      } finally {
        spillChannel = null;
        spillOut = null;
      }
    }
  }
}
