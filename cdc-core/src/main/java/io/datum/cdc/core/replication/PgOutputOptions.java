package io.datum.cdc.core.replication;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.core.assembly.TransactionAssembler;
import io.datum.cdc.core.config.OriginFilter;
import io.datum.cdc.core.config.SourceConfiguration;
import io.datum.cdc.core.config.SourceOption;
import io.datum.cdc.core.config.SourceOptions;
import io.datum.cdc.core.pgoutput.PgOutputDecoder;
import io.datum.cdc.core.types.PgBinaryTypes;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The pgoutput options of one connection, checked against the server's version: pgoutput refuses an
 * option it does not know, so each is sent only where the server has it (src/backend/
 * replication/pgoutput/pgoutput.c, parse_output_parameters; PostgreSQL docs, 55.5 Logical Streaming
 * Replication Protocol, "Logical Streaming Replication Parameters").
 *
 * <p>Protocol versions: 1 (10+), 2 (14+, streaming), 3 (15+, two-phase), 4 (16+, parallel
 * streaming). Options: {@code messages} and {@code binary} (14+), {@code streaming on} (14+, proto
 * 2), {@code streaming parallel} (16+, proto 4), {@code two_phase} (15+, proto 3), {@code origin}
 * (16+).
 *
 * @param protocolVersion the negotiated {@code proto_version}
 * @param slotOptions the options for START_REPLICATION (without {@code publication_names}), in
 *     sending order, values unquoted
 * @param abortInfo whether Stream Abort carries the abort LSN and time
 */
record PgOutputOptions(int protocolVersion, Map<String, String> slotOptions, boolean abortInfo) {

  /**
   * Returns the highest pgoutput protocol version a server supports.
   *
   * @param serverVersionNum {@code server_version_num}, e.g. 170006
   * @return 1 to 4
   */
  static int highestProtocol(int serverVersionNum) {
    if (serverVersionNum >= 160000) {
      return 4;
    }
    if (serverVersionNum >= 150000) {
      return 3;
    }
    return serverVersionNum >= 140000 ? 2 : 1;
  }

  /**
   * Chooses the protocol version and options.
   *
   * @param config the source's settings; protocol version 0 means the highest the server supports
   * @param serverVersionNum the server's {@code server_version_num}
   * @param peerMessages true if the stream's peer producer needs logical decoding messages (the
   *     snapshots' watermarks and requests), whether or not the source asked for them
   * @return the options
   * @throws CdcConfigurationException naming the option, what it needs and the server's version, if
   *     the server or the chosen protocol version is too old for a requested option
   */
  static PgOutputOptions negotiate(
      SourceConfiguration config, int serverVersionNum, boolean peerMessages) {
    int highest = highestProtocol(serverVersionNum);
    int version =
        config.get(SourceOptions.PROTOCOL_VERSION) == 0
            ? highest
            : config.get(SourceOptions.PROTOCOL_VERSION);
    String server = "the server is " + serverVersionNum + " (server_version_num)";
    if (version > highest) {
      throw new CdcConfigurationException(
          "pgoutput protocol version "
              + version
              + " needs PostgreSQL "
              + new String[] {"", "10", "14", "15", "16"}[version]
              + " or later; "
              + server);
    }
    Map<String, String> options = new LinkedHashMap<>();
    options.put("proto_version", Integer.toString(version));
    String streaming = config.get(SourceOptions.STREAMING).name().toLowerCase(Locale.ROOT);
    OriginFilter originFilter = config.get(SourceOptions.ORIGIN);
    String origin = originFilter == null ? null : originFilter.name().toLowerCase(Locale.ROOT);
    require(
        config.get(SourceOptions.MESSAGES), SourceOptions.MESSAGES, 1, serverVersionNum, version);
    require(config.get(SourceOptions.BINARY), SourceOptions.BINARY, 1, serverVersionNum, version);
    require(streaming.equals("on"), "streaming on", 140000, 2, serverVersionNum, version);
    require(
        streaming.equals("parallel"), "streaming parallel", 160000, 4, serverVersionNum, version);
    require(
        config.get(SourceOptions.TWO_PHASE), SourceOptions.TWO_PHASE, 3, serverVersionNum, version);
    require(origin != null, SourceOptions.ORIGIN, 1, serverVersionNum, version);
    if (config.get(SourceOptions.MESSAGES) || peerMessages) {
      // snapshots' watermarks and requests are logical decoding messages of their own prefix
      options.put("messages", "true");
    }
    if (config.get(SourceOptions.BINARY)) {
      options.put("binary", "true");
    }
    if (!streaming.equals("off")) {
      // a boolean before 16, "parallel" or a boolean since (pgoutput.c, parse_output_parameters)
      options.put("streaming", streaming);
    }
    if (config.get(SourceOptions.TWO_PHASE)) {
      options.put("two_phase", "true");
    }
    if (origin != null) {
      options.put("origin", origin);
    }
    return new PgOutputOptions(
        version, Collections.unmodifiableMap(options), streaming.equals("parallel"));
  }

  /** As below, with the server version the option's declaration names and its pgoutput name. */
  private static void require(
      boolean wanted, SourceOption<?> option, int minProtocol, int server, int protocol) {
    require(
        wanted,
        option.name().replace('-', '_'),
        option.minimumPostgres() * 10000,
        minProtocol,
        server,
        protocol);
  }

  private static void require(
      boolean wanted, String option, int minServer, int minProtocol, int server, int protocol) {
    if (!wanted) {
      return;
    }
    if (server < minServer) {
      throw new CdcConfigurationException(
          "the pgoutput option "
              + option
              + " needs PostgreSQL "
              + minServer / 10000
              + " or later; the server is "
              + server
              + " (server_version_num)");
    }
    if (protocol < minProtocol) {
      throw new CdcConfigurationException(
          "the pgoutput option "
              + option
              + " needs protocol version "
              + minProtocol
              + " or later, but protocol version "
              + protocol
              + " was chosen");
    }
  }

  /** Returns a decoder for these options that defers changes (see {@link TransactionAssembler}). */
  PgOutputDecoder decoder() {
    return decoder(null);
  }

  /**
   * Returns a decoder for these options that defers changes and takes the codecs of user-defined
   * and other non-builtin column types from {@code binaryTypes}.
   *
   * @param binaryTypes the source's type catalog (codecs of non-builtin column types, both formats)
   * @return the decoder
   */
  PgOutputDecoder decoder(PgBinaryTypes binaryTypes) {
    return new PgOutputDecoder(protocolVersion, abortInfo, binaryTypes);
  }
}
