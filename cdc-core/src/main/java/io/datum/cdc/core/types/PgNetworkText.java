package io.datum.cdc.core.types;

/**
 * Text output of the network address types from their binary send format: {@code inet}/{@code cidr}
 * ({@code network_send} and {@code network_out}, src/backend/utils/adt/network.c, which prints with
 * {@code pg_inet_net_ntop}, src/port/inet_net_ntop.c) and {@code macaddr}/{@code macaddr8} (mac.c,
 * mac8.c). Throws {@link IllegalArgumentException} for malformed values.
 */
final class PgNetworkText {

  /** {@code PGSQL_AF_INET} and {@code PGSQL_AF_INET6} (src/include/utils/inet.h). */
  private static final int AF_INET = 2;

  private static final int AF_INET6 = 3;

  private PgNetworkText() {}

  /**
   * {@code network_send}: family byte, mask bits byte, is-cidr byte, address length byte (4 or 16),
   * address bytes. {@code inet_out} prints the address with {@code /bits} unless the mask is full;
   * {@code cidr_out} always appends {@code /bits}.
   *
   * @param c the value
   * @param cidr true for the {@code cidr} type's output, false for {@code inet}'s
   * @return the text, for example {@code 192.168.0.1/24} or {@code 2001:db8::/32}
   */
  static String inet(PgBinaryCursor c, boolean cidr) {
    int family = c.u8("inet family");
    int bits = c.u8("inet mask bits");
    c.u8("inet is-cidr flag"); // the type oid decides the output function, as on the server
    int size = c.u8("inet address length");
    int expected = family == AF_INET ? 4 : family == AF_INET6 ? 16 : -1;
    if (expected < 0) {
      throw new IllegalArgumentException("unknown inet address family " + family);
    }
    if (size != expected || bits > expected * 8) {
      throw new IllegalArgumentException(
          "inet family "
              + family
              + " needs a "
              + expected
              + "-byte address and at most "
              + expected * 8
              + " mask bits, got "
              + size
              + " bytes and "
              + bits
              + " bits");
    }
    int at = c.skip(size, "inet address");
    byte[] b = c.array();
    String text = family == AF_INET ? ipv4(b, at, bits) : ipv6(b, at, bits);
    if (cidr && text.indexOf('/') < 0) {
      text = text + '/' + bits;
    }
    return text;
  }

  /** {@code inet_net_ntop_ipv4}: all four octets, then {@code /bits} unless 32. */
  private static String ipv4(byte[] b, int at, int bits) {
    String s =
        (b[at] & 0xFF)
            + "."
            + (b[at + 1] & 0xFF)
            + "."
            + (b[at + 2] & 0xFF)
            + "."
            + (b[at + 3] & 0xFF);
    return bits == 32 ? s : s + "/" + bits;
  }

  /**
   * {@code inet_net_ntop_ipv6}: lowercase hexadecimal groups; the first longest run of at least two
   * zero groups becomes {@code ::}; an address starting with six zero groups, or five and {@code
   * ffff}, ends in dotted IPv4 form; then {@code /bits} unless 128.
   */
  private static String ipv6(byte[] b, int at, int bits) {
    int[] words = new int[8];
    for (int i = 0; i < 8; i++) {
      words[i] = ((b[at + 2 * i] & 0xFF) << 8) | (b[at + 2 * i + 1] & 0xFF);
    }
    int bestBase = -1;
    int bestLen = 0;
    int curBase = -1;
    int curLen = 0;
    for (int i = 0; i < 8; i++) {
      if (words[i] == 0) {
        if (curBase == -1) {
          curBase = i;
          curLen = 1;
        } else {
          curLen++;
        }
      } else if (curBase != -1) {
        if (bestBase == -1 || curLen > bestLen) {
          bestBase = curBase;
          bestLen = curLen;
        }
        curBase = -1;
      }
    }
    if (curBase != -1 && (bestBase == -1 || curLen > bestLen)) {
      bestBase = curBase;
      bestLen = curLen;
    }
    if (bestBase != -1 && bestLen < 2) {
      bestBase = -1;
    }
    StringBuilder sb = new StringBuilder(48);
    for (int i = 0; i < 8; i++) {
      if (bestBase != -1 && i >= bestBase && i < bestBase + bestLen) {
        if (i == bestBase) {
          sb.append(':');
        }
        continue;
      }
      if (i != 0) {
        sb.append(':');
      }
      if (i == 6
          && bestBase == 0
          && (bestLen == 6
              || (bestLen == 7 && words[7] != 0x0001)
              || (bestLen == 5 && words[5] == 0xffff))) {
        sb.append(ipv4(b, at + 12, 32));
        break;
      }
      sb.append(Integer.toHexString(words[i]));
    }
    if (bestBase != -1 && bestBase + bestLen == 8) {
      sb.append(':');
    }
    if (bits != 128) {
      sb.append('/').append(bits);
    }
    return sb.toString();
  }

  /**
   * {@code macaddr_send}/{@code macaddr8_send}: the 6 or 8 address bytes; printed as lowercase
   * hexadecimal pairs separated by {@code :} ({@code macaddr_out}, {@code macaddr8_out}).
   */
  static String macaddr(PgBinaryCursor c, int size) {
    if (c.remaining() != size) {
      throw new IllegalArgumentException(
          (size == 6 ? "macaddr" : "macaddr8") + " needs " + size + " bytes, got " + c.remaining());
    }
    int at = c.skip(size, "mac address");
    StringBuilder sb = new StringBuilder(size * 3);
    for (int i = 0; i < size; i++) {
      if (i > 0) {
        sb.append(':');
      }
      int v = c.array()[at + i] & 0xFF;
      sb.append(Character.forDigit(v >>> 4, 16)).append(Character.forDigit(v & 15, 16));
    }
    return sb.toString();
  }
}
