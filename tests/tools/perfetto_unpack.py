#!/usr/bin/env python3
"""Writes a Perfetto trace with its compressed bundles opened: every packet of
TracePacket.zstd_compressed_packets (or compressed_packets, deflate) in place of the
bundle, as trace processor reads them. The result decodes with
`protoc --decode=perfetto.protos.Trace`.

    perfetto_unpack.py IN.perfetto-trace OUT.pb

Needs the zstd command for zstd bundles. Standard library otherwise."""
import subprocess
import sys
import zlib

PACKET = 1
ZSTD_COMPRESSED_PACKETS = 133
COMPRESSED_PACKETS = 50  # deflate


def varint(data, at):
    value, shift = 0, 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def fields(data):
    """(field number, wire type, value or bytes, raw bytes of the whole field)."""
    at = 0
    while at < len(data):
        start = at
        tag, at = varint(data, at)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, at = varint(data, at)
        elif wire == 1:
            value, at = data[at:at + 8], at + 8
        elif wire == 2:
            size, at = varint(data, at)
            value, at = data[at:at + size], at + size
        elif wire == 5:
            value, at = data[at:at + 4], at + 4
        else:
            raise ValueError(f"wire type {wire} at byte {start}")
        yield number, wire, value, data[start:at]


def bundle_of(packet):
    """(codec, compressed bytes) when the packet is a bundle, else None."""
    found = None
    for number, wire, value, _ in fields(packet):
        if wire == 2 and number in (ZSTD_COMPRESSED_PACKETS, COMPRESSED_PACKETS):
            found = ("zstd" if number == ZSTD_COMPRESSED_PACKETS else "deflate", value)
    return found


def unpack(data):
    out = bytearray()
    zstd_run = bytearray()  # consecutive zstd frames decompress in one call

    def flush_zstd():
        if zstd_run:
            out.extend(subprocess.run(["zstd", "-dc"], input=bytes(zstd_run),
                                      stdout=subprocess.PIPE, check=True).stdout)
            zstd_run.clear()

    for number, wire, value, raw in fields(data):
        if number != PACKET or wire != 2:
            raise ValueError(f"not a Perfetto trace: field {number} at top level")
        bundle = bundle_of(value)
        if bundle is None:
            flush_zstd()
            out.extend(raw)
        elif bundle[0] == "zstd":
            zstd_run.extend(bundle[1])
        else:
            flush_zstd()
            out.extend(zlib.decompress(bundle[1]))
    flush_zstd()
    return bytes(out)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    with open(sys.argv[2], "wb") as f:
        f.write(unpack(data))


if __name__ == "__main__":
    main()
