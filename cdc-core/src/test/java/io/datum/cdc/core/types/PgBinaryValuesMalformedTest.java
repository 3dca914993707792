package io.datum.cdc.core.types;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.datum.cdc.event.PgInterval;
import java.math.BigDecimal;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Crafted binary values that are too short, too long or lie about their lengths raise {@link
 * IllegalArgumentException} with a message saying what is wrong, never an index exception.
 */
class PgBinaryValuesMalformedTest {

  private static byte[] int4(int v) {
    return SendBytes.of().i32(v).build();
  }

  private static String fails(int oid, byte[] value) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> PgBinaryValues.decode(oid, value));
    assertTrue(e.getMessage() != null && !e.getMessage().isBlank());
    return e.getMessage();
  }

  static Stream<Arguments> malformed() {
    return Stream.of(
        arguments("int4 of 3 bytes", 23, new byte[3], "int4 binary value must be 4 bytes, got 3"),
        arguments("int4 of 5 bytes", 23, new byte[5], "must be 4 bytes, got 5"),
        arguments("int2 of 1 byte", 21, new byte[1], "must be 2 bytes"),
        arguments("int8 of 0 bytes", 20, new byte[0], "must be 8 bytes, got 0"),
        arguments("oid of 8 bytes", 26, new byte[8], "must be 4 bytes"),
        arguments("float8 of 4 bytes", 701, new byte[4], "must be 8 bytes"),
        arguments("float4 of 8 bytes", 700, new byte[8], "must be 4 bytes"),
        arguments("bool of 2 bytes", 16, new byte[2], "must be 1 bytes"),
        arguments("bool byte 2", 16, new byte[] {2}, "0 or 1 expected"),
        arguments("\"char\" of 2 bytes", 18, new byte[2], "must be 1 bytes"),
        arguments("uuid of 15 bytes", 2950, new byte[15], "must be 16 bytes"),
        arguments("date of 3 bytes", 1082, new byte[3], "must be 4 bytes"),
        arguments("time of 7 bytes", 1083, new byte[7], "must be 8 bytes"),
        arguments("time -1", 1083, SendBytes.of().i64(-1).build(), "out of range"),
        arguments(
            "time past 24:00", 1083, SendBytes.of().i64(86_400_000_001L).build(), "out of range"),
        arguments("timetz of 8 bytes", 1266, new byte[8], "must be 12 bytes"),
        arguments("timetz zone 16h", 1266, SendBytes.of().i64(0).i32(16 * 3600).build(), "zone"),
        arguments("timestamp of 9 bytes", 1114, new byte[9], "must be 8 bytes"),
        arguments("interval of 12 bytes", 1186, new byte[12], "must be 16 bytes"),
        arguments("numeric header cut", 1700, new byte[6], "needs 2 bytes at offset 6"),
        arguments(
            "numeric missing a digit",
            1700,
            SendBytes.of().i16(3).i16(0).i16(0).i16(0).i16(1).i16(2).build(),
            "3 digits needs 6 digit bytes, got 4"),
        arguments(
            "numeric extra bytes",
            1700,
            SendBytes.of().i16(1).i16(0).i16(0).i16(0).i16(1).i16(2).build(),
            "needs 2 digit bytes, got 4"),
        arguments(
            "numeric digit 10000",
            1700,
            SendBytes.of().i16(1).i16(0).i16(0).i16(0).i16(10_000).build(),
            "invalid numeric digit 10000"),
        arguments(
            "numeric negative digit",
            1700,
            SendBytes.of().i16(1).i16(0).i16(0).i16(0).i16(-1).build(),
            "invalid numeric digit -1"),
        arguments(
            "numeric bad sign",
            1700,
            SendBytes.of().i16(0).i16(0).i16(0x1234).i16(0).build(),
            "sign"),
        arguments(
            "numeric scale too big",
            1700,
            SendBytes.of().i16(0).i16(0).i16(0).i16(0x4000).build(),
            "display scale"),
        arguments(
            "NaN with digits",
            1700,
            SendBytes.of().i16(1).i16(0).i16(0xC000).i16(0).i16(1).build(),
            "special numeric"),
        arguments(
            "numeric claiming 65535 digits",
            1700,
            SendBytes.of().i16(0xFFFF).i16(0).i16(0).i16(0).i16(1).build(),
            "65535 digits needs 131070"),
        arguments("jsonb version 2", 3802, SendBytes.of().i8(2).text("{}").build(), "version 2"),
        arguments("jsonb empty", 3802, new byte[0], "jsonb format version needs 1 bytes"),
        arguments("array header cut", 1007, SendBytes.of().i32(1).i32(0).build(), "needs 4 bytes"),
        arguments(
            "array with 7 dimensions",
            1007,
            SendBytes.of().i32(7).i32(0).i32(23).build(),
            "7 dimensions"),
        arguments(
            "array with -1 dimensions",
            1007,
            SendBytes.of().i32(-1).i32(0).i32(23).build(),
            "-1 dimensions"),
        arguments(
            "array flags 2", 1007, SendBytes.of().arrayHeader(2, 23, 1, 1).build(), "flags are 2"),
        arguments(
            "array of the wrong element type",
            1007,
            SendBytes.of().arrayHeader(0, 20, 1, 1).element(int4(1)).build(),
            "element type oid is 20 but the array type's element type is 23"),
        arguments(
            "array claiming a billion elements",
            1007,
            SendBytes.of().arrayHeader(0, 23, 1_000_000_000, 1).element(int4(1)).build(),
            "claims at least 1000000000 elements but only 8 bytes"),
        arguments(
            "array whose dimensions multiply past int",
            1007,
            SendBytes.of().arrayHeader(0, 23, 65_536, 1, 65_536, 1).element(int4(1)).build(),
            "claims at least"),
        arguments(
            "array with a negative dimension",
            1007,
            SendBytes.of().arrayHeader(0, 23, -1, 1).build(),
            "has length -1"),
        arguments(
            "array element longer than the value",
            1007,
            SendBytes.of().arrayHeader(0, 23, 1, 1).i32(100).raw(new byte[4]).build(),
            "array element 1 needs 100 bytes"),
        arguments(
            "array element length -2",
            1007,
            SendBytes.of().arrayHeader(0, 23, 1, 1).i32(-2).build(),
            "negative length -2"),
        arguments(
            "array with fewer elements than its header says",
            1007,
            SendBytes.of().arrayHeader(0, 23, 3, 1).element(int4(1)).element(int4(2)).build(),
            "length of array element 3 needs 4 bytes"),
        arguments(
            "array with bytes after its elements",
            1007,
            SendBytes.of().arrayHeader(0, 23, 1, 1).element(int4(1)).i8(0).build(),
            "1 unexpected trailing bytes"),
        arguments(
            "array with a malformed element",
            1007,
            SendBytes.of().arrayHeader(0, 23, 2, 1).element(int4(1)).element(new byte[3]).build(),
            "array element 2: int4 binary value must be 4 bytes, got 3"),
        arguments(
            "text array with a malformed element",
            1017,
            SendBytes.of().arrayHeader(0, 600, 1, 1).element(new byte[15]).build(),
            "array element 1: y needs 8 bytes"),
        arguments(
            "inet family 9",
            869,
            SendBytes.of().i8(9).i8(32).i8(0).i8(4).i32(0).build(),
            "unknown inet address family 9"),
        arguments(
            "inet v4 with 16 address bytes",
            869,
            SendBytes.of().i8(2).i8(32).i8(0).i8(16).raw(new byte[16]).build(),
            "needs a 4-byte address"),
        arguments(
            "inet v4 with 33 bits",
            869,
            SendBytes.of().i8(2).i8(33).i8(0).i8(4).i32(0).build(),
            "at most 32 mask bits"),
        arguments(
            "inet claiming more address than sent",
            869,
            SendBytes.of().i8(3).i8(128).i8(0).i8(16).raw(new byte[8]).build(),
            "inet address needs 16 bytes"),
        arguments("macaddr of 5 bytes", 829, new byte[5], "macaddr needs 6 bytes, got 5"),
        arguments("macaddr8 of 6 bytes", 774, new byte[6], "macaddr8 needs 8 bytes, got 6"),
        arguments("money of 4 bytes", 790, new byte[4], "needs 8 bytes"),
        arguments("pg_lsn of 9 bytes", 3220, new byte[9], "unexpected trailing bytes"),
        arguments("bit length -1", 1560, SendBytes.of().i32(-1).build(), "negative bit length"),
        arguments(
            "bit bytes missing",
            1562,
            SendBytes.of().i32(17).i8(0).i8(0).build(),
            "17 bits needs 3 bytes, got 2"),
        arguments(
            "tsvector claiming many lexemes",
            3614,
            SendBytes.of().i32(1_000_000).build(),
            "lexeme count 1000000"),
        arguments(
            "tsvector lexeme without NUL",
            3614,
            SendBytes.of().i32(1).text("abc").build(),
            "no NUL terminator"),
        arguments(
            "tsvector positions cut",
            3614,
            SendBytes.of().i32(1).text("a").i8(0).i16(3).i16(1).build(),
            "tsvector position needs 2 bytes"),
        arguments(
            "path claiming many points",
            602,
            SendBytes.of().i8(1).i32(1_000).build(),
            "point count"),
        arguments(
            "path closed flag 2", 602, SendBytes.of().i8(2).i32(0).build(), "closed flag is 2"),
        arguments("polygon count -1", 604, SendBytes.of().i32(-1).build(), "point count -1"),
        arguments("point of 15 bytes", 600, new byte[15], "y needs 8 bytes"),
        arguments("circle of 32 bytes", 718, new byte[32], "unexpected trailing bytes"),
        arguments(
            "snapshot claiming many xids",
            5038,
            SendBytes.of().i32(1000).i64(1).i64(2).build(),
            "xip count 1000"),
        arguments("tid of 5 bytes", 27, new byte[5], "tid offset needs 2 bytes"),
        arguments(
            "int2vector of two dimensions",
            22,
            SendBytes.of().arrayHeader(0, 21, 1, 0, 1, 0).element(new byte[2]).build(),
            "one dimension"),
        arguments(
            "oidvector with a NULL",
            30,
            SendBytes.of().arrayHeader(1, 26, 1, 0).i32(-1).build(),
            "vector element 1 is NULL"),
        arguments("jsonpath version 0", 4072, SendBytes.of().i8(0).text("$").build(), "version 0"),
        arguments(
            "user-defined type",
            16_385,
            SendBytes.of().text("happy").build(),
            "binary values of type oid 16385 cannot be decoded"),
        arguments("regclass", 2205, int4(1259), "type oid 2205"),
        arguments("unsigned oid in the message", -2, new byte[0], "type oid 4294967294"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("malformed")
  void malformedValuesRaiseIllegalArgumentException(
      String what, int oid, byte[] value, String expected) {
    String message = fails(oid, value);
    assertTrue(message.contains(expected), what + ": " + message);
  }

  @Test
  void theValueRangeMustLieInTheArray() {
    byte[] b = new byte[4];
    assertThrows(IllegalArgumentException.class, () -> PgBinaryValues.decode(23, b, 2, 4));
    assertThrows(IllegalArgumentException.class, () -> PgBinaryValues.decode(23, b, -1, 4));
    assertThrows(IllegalArgumentException.class, () -> PgBinaryValues.decode(23, b, 0, -1));
    assertEquals(0x01020304, PgBinaryValues.decode(23, new byte[] {9, 1, 2, 3, 4, 9}, 1, 4));
  }

  /** Valid encodings of length-determined formats, each checked to decode first. */
  static Stream<Arguments> valid() {
    return Stream.of(
        arguments(
            1007,
            SendBytes.of().arrayHeader(1, 23, 2, 0).element(int4(7)).i32(-1).build(),
            Arrays.asList(7, null)),
        arguments(
            1700,
            SendBytes.of().i16(2).i16(0).i16(0).i16(3).i16(12).i16(3400).build(),
            new BigDecimal("12.340")),
        arguments(1186, SendBytes.of().i64(-1).i32(2).i32(-3).build(), new PgInterval(-3, 2, -1)),
        arguments(
            869,
            SendBytes.of()
                .i8(3)
                .i8(64)
                .i8(0)
                .i8(16)
                .raw(new byte[] {0x20, 0x01, 0x0d, (byte) 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})
                .build(),
            "2001:db8::1/64"),
        arguments(
            3614,
            SendBytes.of()
                .i32(2)
                .text("a")
                .i8(0)
                .i16(2)
                .i16(1)
                .i16(0xC002)
                .text("b'c")
                .i8(0)
                .i16(0)
                .build(),
            "'a':1,2A 'b''c'"),
        arguments(
            602,
            SendBytes.of().i8(0).i32(2).f64(0).f64(1.5).f64(-0.0).f64(1e300).build(),
            "[(0,1.5),(-0,1e+300)]"),
        arguments(
            1017,
            SendBytes.of()
                .arrayHeader(1, 600, 2, 0)
                .element(SendBytes.of().f64(1).f64(2).build())
                .i32(-1)
                .build(),
            "[0:1]={\"(1,2)\",NULL}"),
        arguments(
            5038, SendBytes.of().i32(2).i64(10).i64(20).i64(11).i64(12).build(), "10:20:11,12"),
        arguments(1562, SendBytes.of().i32(10).i8(0xA5).i8(0xC0).build(), "1010010111"),
        arguments(790, SendBytes.of().i64(-123456789).build(), "-$1,234,567.89"),
        arguments(790, SendBytes.of().i64(5).build(), "$0.05"),
        arguments(18, new byte[] {(byte) 0xC8}, "\\310"));
  }

  /** Every proper prefix of a valid length-determined value is rejected, never mis-read. */
  @ParameterizedTest
  @MethodSource("valid")
  void everyTruncationOfAValidValueIsRejected(int oid, byte[] value, Object expected) {
    Object decoded = PgBinaryValues.decode(oid, value);
    PgBinaryValuesEquivalenceTest.assertSameValue(expected, decoded, "valid value");
    for (int n = 0; n < value.length; n++) {
      fails(oid, Arrays.copyOf(value, n));
    }
    fails(oid, Arrays.copyOf(value, value.length + 1)); // and a trailing byte too
  }

  /**
   * Random bytes for every supported type, and random mutations of valid values: the decoder
   * returns a value or raises IllegalArgumentException, nothing else.
   */
  @Test
  void randomBytesNeverRaiseAnythingButIllegalArgumentException() {
    Random random = new Random(42);
    List<Integer> oids =
        List.of(
            16, 17, 18, 19, 20, 21, 22, 23, 25, 26, 27, 28, 29, 30, 114, 142, 600, 601, 602, 603,
            604, 628, 650, 718, 774, 790, 829, 869, 700, 701, 1007, 1009, 1017, 1020, 1082, 1083,
            1114, 1184, 1186, 1231, 1266, 1560, 1562, 1700, 1790, 2950, 2970, 3220, 3614, 3802,
            4072, 5038, 5069, 1115, 1041, 3643, 2951);
    byte[][] seeds = valid().map(a -> (byte[]) a.get()[1]).toArray(byte[][]::new);
    int decoded = 0;
    for (int round = 0; round < 20_000; round++) {
      int oid = oids.get(random.nextInt(oids.size()));
      byte[] value;
      if (random.nextBoolean()) {
        value = new byte[random.nextInt(48)];
        random.nextBytes(value);
      } else {
        value = seeds[random.nextInt(seeds.length)].clone();
        for (int flips = 1 + random.nextInt(3); flips > 0; flips--) {
          value[random.nextInt(value.length)] = (byte) random.nextInt(256);
        }
      }
      try {
        PgBinaryValues.decode(oid, value);
        decoded++;
      } catch (IllegalArgumentException expected) {
        // the contract
      } catch (RuntimeException e) {
        fail("type oid " + oid + ", bytes " + Arrays.toString(value) + ": " + e, e);
      }
    }
    assertTrue(decoded > 0, "nothing decoded at all");
  }
}
