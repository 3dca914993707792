package io.datum.cdc.core.replication;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.sql.Connection;
import java.sql.SQLException;
import javax.net.ssl.SSLSocket;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.PGStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says, without waiting, whether a replication connection has nothing to read: neither pgjdbc's
 * receive buffer nor the socket's receive queue ({@code FIONREAD}) holds a byte.
 *
 * <p>Why: pgjdbc's {@code PGReplicationStream.readPending()} finds an empty socket by waiting up to
 * 1 ms in {@code poll()} on it ({@code PGStream.hasMessagePending}). A thread that waits on the
 * socket is woken by every segment the walsender sends, and on a machine with few cores the woken
 * reader preempts the walsender right after its {@code send()}: a walsender that is catching up
 * then sends one message per context switch. Measured here (10,000 single-row commits a second, two
 * cores shared by the server, the writer and the consumer): 64% of the walsender's context switches
 * were involuntary, right after {@code send()}, and the stream fell to about 60% of the commit rate
 * for 100 to 200 ms at a time, so pgcdc's p99 latency was 21 to 75 ms against pg_recvlogical's 0.5.
 * A loop that, while messages are arriving, checks with this probe and parks for a fraction of a
 * millisecond instead lets the walsender send several messages per wake-up (see {@link
 * ReplicationLoop}).
 *
 * <p>pgjdbc offers no public way to ask this, so the probe reads two private fields ({@code
 * QueryExecutorBase.pgStream}, {@code PGStream.pgInput}, both present since pgjdbc 42.2). If they
 * cannot be read (another pgjdbc, a module system that refuses access), or the connection is
 * encrypted (SSL or GSS: bytes in the socket are not readable bytes until decrypted, which only a
 * read does), there is no probe and the loop waits in {@code readPending()} as before. The probe
 * answers "nothing to read" only when neither place holds a byte; should a later pgjdbc buffer
 * received messages elsewhere (a reader thread of its own has been proposed, pgjdbc pull request
 * 4080), the loop still reads within {@link ReplicationLoop}'s 1 ms busy window, so the cost of a
 * wrong answer is bounded by that. pgjdbc's 1 ms wait and its cost were reported upstream (pgjdbc
 * issue 1987); there is no non-blocking alternative in its API (42.7).
 */
final class ReceiveProbe {

  private static final Logger LOG = LoggerFactory.getLogger(ReceiveProbe.class);

  private final InputStream received;

  private ReceiveProbe(InputStream received) {
    this.received = received;
  }

  /**
   * The probe of a replication connection, or null if it cannot have one (see the class comment).
   * Call after the connection is set up (the receive buffer is replaced when SSL is negotiated).
   *
   * @param connection a pgjdbc connection, not null
   * @return the probe, or null
   */
  static ReceiveProbe of(Connection connection) {
    try {
      Object executor = connection.unwrap(BaseConnection.class).getQueryExecutor();
      PGStream stream = (PGStream) field(executor.getClass(), "pgStream").get(executor);
      if (stream.isGssEncrypted() || stream.getSocket() instanceof SSLSocket) {
        return null;
      }
      Object input = field(PGStream.class, "pgInput").get(stream);
      return input instanceof InputStream in ? new ReceiveProbe(in) : null;
    } catch (SQLException | ReflectiveOperationException | RuntimeException e) {
      // RuntimeException: InaccessibleObjectException from setAccessible, a ClassCastException
      LOG.debug(
          "no non-blocking receive check for the replication connection ({}); reads wait on the"
              + " socket as pgjdbc does",
          e.toString());
      return null;
    }
  }

  private static Field field(Class<?> type, String name) throws NoSuchFieldException {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      try {
        Field f = c.getDeclaredField(name);
        f.setAccessible(true);
        return f;
      } catch (NoSuchFieldException e) {
        // look in the superclass
      }
    }
    throw new NoSuchFieldException(type.getName() + "." + name);
  }

  /**
   * Returns true only if neither pgjdbc's buffer nor the socket holds a byte now; false if either
   * does, or if asking failed (then the caller reads, and the read reports the failure).
   */
  boolean nothingToRead() {
    try {
      return received.available() == 0;
    } catch (IOException e) {
      return false;
    }
  }
}
