-- rocescope.lua: Wireshark dissector for RoCEv2 / RoCEv1 (the InfiniBand transport over Ethernet),
-- with the field names of rocescope (shared/spec/INTERFACES.md, "One field vocabulary").
--
-- GENERATED FILE, do not edit. `rocescope dissector > dissector/rocescope.lua` writes it: the part
-- down to "end of the generated part" from the codec (field registry codec/src/field.rs, header
-- layouts codec/src/layout/, opcode table codec/src/ib/opcode.rs, CM ids codec/src/ib/cm.rs, profiles codec/src/profile.rs, parameter
-- table codec/src/params/table.rs, warning texts codec/src/warning.rs, the extensions' opcode
-- sets, constants and byte layouts codec/src/ext/), the rest verbatim from dissector/template.lua.
--
-- Use:  tshark -X lua_script:dissector/rocescope.lua -o rocescope.profile:std -r FILE -T fields -e rocescope.bth.psn
-- or install it (`rocescope dissector --install`: Wireshark's personal Lua plugin folder,
-- ~/.local/lib/wireshark/plugins on Linux). Tested with Wireshark 4.0 (Lua 5.2).

-- Loaded once: a second copy (an installed plugin and `-X lua_script:` naming this file) returns
-- here quietly; the first one loaded (the installed plugin) is the one in use.
-- (Wireshark runs each plugin file in its own environment: the mark goes in the global table.)
if _G.rocescope_plugin_loaded then return end
_G.rocescope_plugin_loaded = true

-- ==== generated: the field registry (codec/src/field.rs), in registry order ====
local F = {}             -- registry name -> ProtoField
local FIELD_LIST = {}    -- every ProtoField, in registry order
local FIELD_KIND = {}    -- registry name -> "uint" | "uint64" | "bool" | "bytes" | "enum" | "text"
local FIELD_PROFILE = {} -- registry name -> the profile that yields it ("std": frame, IBTA, CM, PFC)
local REPEATED = {}      -- registry name -> true when it may occur several times in one packet
local ENUM_VALUES = {}   -- registry name -> set of the names an enumerated field takes
local BOOL_STRINGS = {[0] = "False", [1] = "True"}
local function field(name, kind, profile, repeated, pf)
    F[name] = pf
    FIELD_LIST[#FIELD_LIST + 1] = pf
    FIELD_KIND[name] = kind
    FIELD_PROFILE[name] = profile
    REPEATED[name] = repeated
end
-- std
field("rocescope.profile", "enum", "std", false, ProtoField.new("Transport profile the packet was decoded with", "rocescope.profile", ftypes.STRING, nil, base.NONE, nil, "Transport profile the packet was decoded with"))
field("rocescope.truncated", "bool", "std", false, ProtoField.new("The capture holds fewer bytes than the packet's headers describe", "rocescope.truncated", ftypes.UINT8, BOOL_STRINGS, base.DEC, nil, "The capture holds fewer bytes than the packet's headers describe"))
field("rocescope.opcode_name", "text", "std", false, ProtoField.new("Transport and operation named by the BTH OpCode", "rocescope.opcode_name", ftypes.STRING, nil, base.NONE, nil, "Transport and operation named by the BTH OpCode"))
field("rocescope.payload_len", "uint", "std", false, ProtoField.new("Payload bytes between the last header and the pad", "rocescope.payload_len", ftypes.UINT32, nil, base.DEC, nil, "Payload bytes between the last header and the pad"))
field("rocescope.warning", "text", "std", true, ProtoField.new("One problem found while decoding", "rocescope.warning", ftypes.STRING, nil, base.NONE, nil, "One problem found while decoding"))
field("rocescope.lrh.vl", "uint", "std", false, ProtoField.new("LRH Virtual Lane", "rocescope.lrh.vl", ftypes.UINT8, nil, base.DEC, nil, "LRH Virtual Lane"))
field("rocescope.lrh.lver", "uint", "std", false, ProtoField.new("LRH Link Version", "rocescope.lrh.lver", ftypes.UINT8, nil, base.DEC, nil, "LRH Link Version"))
field("rocescope.lrh.sl", "uint", "std", false, ProtoField.new("LRH Service Level", "rocescope.lrh.sl", ftypes.UINT8, nil, base.DEC, nil, "LRH Service Level"))
field("rocescope.lrh.lnh", "uint", "std", false, ProtoField.new("LRH Link Next Header (2 local, 3 global)", "rocescope.lrh.lnh", ftypes.UINT8, nil, base.DEC, nil, "LRH Link Next Header (2 local, 3 global)"))
field("rocescope.lrh.dlid", "uint", "std", false, ProtoField.new("LRH Destination Local ID", "rocescope.lrh.dlid", ftypes.UINT16, nil, base.DEC, nil, "LRH Destination Local ID"))
field("rocescope.lrh.pktlen", "uint", "std", false, ProtoField.new("LRH Packet Length in words, LRH..ICRC", "rocescope.lrh.pktlen", ftypes.UINT16, nil, base.DEC, nil, "LRH Packet Length in words, LRH..ICRC"))
field("rocescope.lrh.slid", "uint", "std", false, ProtoField.new("LRH Source Local ID", "rocescope.lrh.slid", ftypes.UINT16, nil, base.DEC, nil, "LRH Source Local ID"))
field("rocescope.bth.opcode", "uint", "std", false, ProtoField.new("BTH OpCode", "rocescope.bth.opcode", ftypes.UINT8, nil, base.DEC, nil, "BTH OpCode"))
field("rocescope.bth.se", "bool", "std", false, ProtoField.new("BTH Solicited Event", "rocescope.bth.se", ftypes.UINT8, BOOL_STRINGS, base.DEC, nil, "BTH Solicited Event"))
field("rocescope.bth.m", "bool", "std", false, ProtoField.new("BTH MigReq", "rocescope.bth.m", ftypes.UINT8, BOOL_STRINGS, base.DEC, nil, "BTH MigReq"))
field("rocescope.bth.padcnt", "uint", "std", false, ProtoField.new("BTH Pad Count", "rocescope.bth.padcnt", ftypes.UINT8, nil, base.DEC, nil, "BTH Pad Count"))
field("rocescope.bth.tver", "uint", "std", false, ProtoField.new("BTH Transport Header Version", "rocescope.bth.tver", ftypes.UINT8, nil, base.DEC, nil, "BTH Transport Header Version"))
field("rocescope.bth.p_key", "uint", "std", false, ProtoField.new("BTH Partition Key", "rocescope.bth.p_key", ftypes.UINT16, nil, base.DEC, nil, "BTH Partition Key"))
field("rocescope.bth.fecn", "bool", "std", false, ProtoField.new("BTH Forward ECN (reserved in RoCEv2)", "rocescope.bth.fecn", ftypes.UINT8, BOOL_STRINGS, base.DEC, nil, "BTH Forward ECN (reserved in RoCEv2)"))
field("rocescope.bth.becn", "bool", "std", false, ProtoField.new("BTH Backward ECN", "rocescope.bth.becn", ftypes.UINT8, BOOL_STRINGS, base.DEC, nil, "BTH Backward ECN"))
field("rocescope.bth.destqp", "uint", "std", false, ProtoField.new("BTH Destination QP", "rocescope.bth.destqp", ftypes.UINT24, nil, base.DEC, nil, "BTH Destination QP"))
field("rocescope.bth.a", "bool", "std", false, ProtoField.new("BTH Acknowledge Request", "rocescope.bth.a", ftypes.UINT8, BOOL_STRINGS, base.DEC, nil, "BTH Acknowledge Request"))
field("rocescope.bth.psn", "uint", "std", false, ProtoField.new("BTH Packet Sequence Number", "rocescope.bth.psn", ftypes.UINT24, nil, base.DEC, nil, "BTH Packet Sequence Number"))
field("rocescope.rdeth.eecnxt", "uint", "std", false, ProtoField.new("RDETH EE-Context", "rocescope.rdeth.eecnxt", ftypes.UINT24, nil, base.DEC, nil, "RDETH EE-Context"))
field("rocescope.deth.q_key", "uint", "std", false, ProtoField.new("DETH Queue Key", "rocescope.deth.q_key", ftypes.UINT32, nil, base.DEC, nil, "DETH Queue Key"))
field("rocescope.deth.reserved", "uint", "std", false, ProtoField.new("DETH reserved byte", "rocescope.deth.reserved", ftypes.UINT8, nil, base.DEC, nil, "DETH reserved byte"))
field("rocescope.deth.srcqp", "uint", "std", false, ProtoField.new("DETH Source QP", "rocescope.deth.srcqp", ftypes.UINT24, nil, base.DEC, nil, "DETH Source QP"))
field("rocescope.xrceth.xrcsrq", "uint", "std", false, ProtoField.new("XRCETH XRC Shared Receive Queue", "rocescope.xrceth.xrcsrq", ftypes.UINT24, nil, base.DEC, nil, "XRCETH XRC Shared Receive Queue"))
field("rocescope.reth.va", "uint64", "std", false, ProtoField.new("RETH Virtual Address", "rocescope.reth.va", ftypes.UINT64, nil, base.DEC, nil, "RETH Virtual Address"))
field("rocescope.reth.r_key", "uint", "std", false, ProtoField.new("RETH Remote Key", "rocescope.reth.r_key", ftypes.UINT32, nil, base.DEC, nil, "RETH Remote Key"))
field("rocescope.reth.dmalen", "uint", "std", false, ProtoField.new("RETH DMA Length", "rocescope.reth.dmalen", ftypes.UINT32, nil, base.DEC, nil, "RETH DMA Length"))
field("rocescope.atomiceth.va", "uint64", "std", false, ProtoField.new("AtomicETH Virtual Address", "rocescope.atomiceth.va", ftypes.UINT64, nil, base.DEC, nil, "AtomicETH Virtual Address"))
field("rocescope.atomiceth.r_key", "uint", "std", false, ProtoField.new("AtomicETH Remote Key", "rocescope.atomiceth.r_key", ftypes.UINT32, nil, base.DEC, nil, "AtomicETH Remote Key"))
field("rocescope.atomiceth.swapdt", "uint64", "std", false, ProtoField.new("AtomicETH Swap (or Add) Data", "rocescope.atomiceth.swapdt", ftypes.UINT64, nil, base.DEC, nil, "AtomicETH Swap (or Add) Data"))
field("rocescope.atomiceth.cmpdt", "uint64", "std", false, ProtoField.new("AtomicETH Compare Data", "rocescope.atomiceth.cmpdt", ftypes.UINT64, nil, base.DEC, nil, "AtomicETH Compare Data"))
field("rocescope.aeth.syndrome", "uint", "std", false, ProtoField.new("AETH Syndrome byte", "rocescope.aeth.syndrome", ftypes.UINT8, nil, base.DEC, nil, "AETH Syndrome byte"))
field("rocescope.aeth.msn", "uint", "std", false, ProtoField.new("AETH Message Sequence Number", "rocescope.aeth.msn", ftypes.UINT24, nil, base.DEC, nil, "AETH Message Sequence Number"))
field("rocescope.aeth.kind", "enum", "std", false, ProtoField.new("AETH syndrome kind", "rocescope.aeth.kind", ftypes.STRING, nil, base.NONE, nil, "AETH syndrome kind"))
field("rocescope.aeth.credit", "uint", "std", false, ProtoField.new("AETH ACK credit count (31: invalid)", "rocescope.aeth.credit", ftypes.UINT8, nil, base.DEC, nil, "AETH ACK credit count (31: invalid)"))
field("rocescope.aeth.rnr_timer", "uint", "std", false, ProtoField.new("AETH RNR NAK timer code", "rocescope.aeth.rnr_timer", ftypes.UINT8, nil, base.DEC, nil, "AETH RNR NAK timer code"))
field("rocescope.aeth.nak_code", "uint", "std", false, ProtoField.new("AETH NAK code (0 PSN sequence error, 1 invalid request, 2 remote access, 3 remote operational, 4 invalid RD request)", "rocescope.aeth.nak_code", ftypes.UINT8, nil, base.DEC, nil, "AETH NAK code (0 PSN sequence error, 1 invalid request, 2 remote access, 3 remote operational, 4 invalid RD request)"))
field("rocescope.irn.sack_psn", "uint", "std", false, ProtoField.new("IRN selective NAK: PSN of the out-of-order packet that triggered it", "rocescope.irn.sack_psn", ftypes.UINT24, nil, base.DEC, nil, "IRN selective NAK: PSN of the out-of-order packet that triggered it"))
field("rocescope.atomicacketh.origremdt", "uint64", "std", false, ProtoField.new("AtomicAckETH Original Remote Data", "rocescope.atomicacketh.origremdt", ftypes.UINT64, nil, base.DEC, nil, "AtomicAckETH Original Remote Data"))
field("rocescope.immdt", "uint", "std", false, ProtoField.new("Immediate Data", "rocescope.immdt", ftypes.UINT32, nil, base.DEC, nil, "Immediate Data"))
field("rocescope.ieth.r_key", "uint", "std", false, ProtoField.new("IETH Remote Key to invalidate", "rocescope.ieth.r_key", ftypes.UINT32, nil, base.DEC, nil, "IETH Remote Key to invalidate"))
field("rocescope.feth.sel", "uint", "std", false, ProtoField.new("FETH selectivity level", "rocescope.feth.sel", ftypes.UINT8, nil, base.DEC, nil, "FETH selectivity level"))
field("rocescope.feth.plt", "uint", "std", false, ProtoField.new("FETH placement type", "rocescope.feth.plt", ftypes.UINT8, nil, base.DEC, nil, "FETH placement type"))
field("rocescope.icrc", "bytes", "std", false, ProtoField.new("Invariant CRC as it appears on the wire", "rocescope.icrc", ftypes.BYTES, nil, base.NONE, nil, "Invariant CRC as it appears on the wire"))
field("rocescope.icrc.status", "enum", "std", false, ProtoField.new("ICRC verdict", "rocescope.icrc.status", ftypes.STRING, nil, base.NONE, nil, "ICRC verdict"))
field("rocescope.vcrc", "bytes", "std", false, ProtoField.new("Variant CRC of a native InfiniBand packet as it appears on the wire", "rocescope.vcrc", ftypes.BYTES, nil, base.NONE, nil, "Variant CRC of a native InfiniBand packet as it appears on the wire"))
field("rocescope.vcrc.status", "enum", "std", false, ProtoField.new("VCRC verdict", "rocescope.vcrc.status", ftypes.STRING, nil, base.NONE, nil, "VCRC verdict"))
field("rocescope.cm.msg", "enum", "std", false, ProtoField.new("Connection Manager message", "rocescope.cm.msg", ftypes.STRING, nil, base.NONE, nil, "Connection Manager message"))
field("rocescope.cm.local_qpn", "uint", "std", false, ProtoField.new("CM sender's QPN", "rocescope.cm.local_qpn", ftypes.UINT24, nil, base.DEC, nil, "CM sender's QPN"))
field("rocescope.cm.remote_qpn", "uint", "std", false, ProtoField.new("CM peer's QPN (DREQ)", "rocescope.cm.remote_qpn", ftypes.UINT24, nil, base.DEC, nil, "CM peer's QPN (DREQ)"))
field("rocescope.cm.start_psn", "uint", "std", false, ProtoField.new("CM starting PSN of the sender's send queue", "rocescope.cm.start_psn", ftypes.UINT24, nil, base.DEC, nil, "CM starting PSN of the sender's send queue"))
field("rocescope.cm.local_comm_id", "uint", "std", false, ProtoField.new("CM sender's communication id", "rocescope.cm.local_comm_id", ftypes.UINT32, nil, base.DEC, nil, "CM sender's communication id"))
field("rocescope.cm.remote_comm_id", "uint", "std", false, ProtoField.new("CM peer's communication id", "rocescope.cm.remote_comm_id", ftypes.UINT32, nil, base.DEC, nil, "CM peer's communication id"))
field("rocescope.pfc.class_enable", "bytes", "std", false, ProtoField.new("PFC class-enable vector (bit i of the last byte: priority i)", "rocescope.pfc.class_enable", ftypes.BYTES, nil, base.NONE, nil, "PFC class-enable vector (bit i of the last byte: priority i)"))
field("rocescope.pfc.quanta", "uint", "std", true, ProtoField.new("Pause time per class in quanta (one value for 802.3x PAUSE)", "rocescope.pfc.quanta", ftypes.UINT16, nil, base.DEC, nil, "Pause time per class in quanta (one value for 802.3x PAUSE)"))
-- dcp
field("rocescope.dcp.tag", "uint", "dcp", false, ProtoField.new("DCP ToS tag (0 non-DCP, 2 data, 3 header-only, 1 ACK)", "rocescope.dcp.tag", ftypes.UINT8, nil, base.DEC, nil, "DCP ToS tag (0 non-DCP, 2 data, 3 header-only, 1 ACK)"))
field("rocescope.dcp.msn", "uint", "dcp", false, ProtoField.new("DCP message sequence number (DCPETH, or the header-only packet's 3 bytes)", "rocescope.dcp.msn", ftypes.UINT24, nil, base.DEC, nil, "DCP message sequence number (DCPETH, or the header-only packet's 3 bytes)"))
field("rocescope.dcp.sretryno", "uint", "dcp", false, ProtoField.new("DCP sender retry number (DCPETH)", "rocescope.dcp.sretryno", ftypes.UINT8, nil, base.DEC, nil, "DCP sender retry number (DCPETH)"))
field("rocescope.dcp.ssn", "uint", "dcp", false, ProtoField.new("DCP SEND sequence number (SSNETH)", "rocescope.dcp.ssn", ftypes.UINT24, nil, base.DEC, nil, "DCP SEND sequence number (SSNETH)"))
field("rocescope.dcp.emsn", "uint", "dcp", false, ProtoField.new("DCP ACK: receiver's expected MSN (all messages below it are complete)", "rocescope.dcp.emsn", ftypes.UINT24, nil, base.DEC, nil, "DCP ACK: receiver's expected MSN (all messages below it are complete)"))
field("rocescope.dcp.ho", "bool", "dcp", false, ProtoField.new("DCP header-only (trimmed) packet", "rocescope.dcp.ho", ftypes.UINT8, BOOL_STRINGS, base.DEC, nil, "DCP header-only (trimmed) packet"))
-- sdr
field("rocescope.sdr.msg_id", "uint", "sdr", false, ProtoField.new("SDR message id (immediate)", "rocescope.sdr.msg_id", ftypes.UINT32, nil, base.DEC, nil, "SDR message id (immediate)"))
field("rocescope.sdr.pkt_off", "uint", "sdr", false, ProtoField.new("SDR packet offset in MTUs from the buffer start (immediate)", "rocescope.sdr.pkt_off", ftypes.UINT32, nil, base.DEC, nil, "SDR packet offset in MTUs from the buffer start (immediate)"))
field("rocescope.sdr.imm_frag", "uint", "sdr", false, ProtoField.new("SDR user-immediate fragment carried by this packet", "rocescope.sdr.imm_frag", ftypes.UINT8, nil, base.DEC, nil, "SDR user-immediate fragment carried by this packet"))
field("rocescope.sdr.user_imm", "uint", "sdr", false, ProtoField.new("SDR user immediate, once rebuilt from its fragments", "rocescope.sdr.user_imm", ftypes.UINT32, nil, base.DEC, nil, "SDR user immediate, once rebuilt from its fragments"))
field("rocescope.sdr.va_ok", "bool", "sdr", false, ProtoField.new("SDR RETH VA agrees with msg_id and pkt_off", "rocescope.sdr.va_ok", ftypes.UINT8, BOOL_STRINGS, base.DEC, nil, "SDR RETH VA agrees with msg_id and pkt_off"))
field("rocescope.sdr.ctrl.type", "enum", "sdr", false, ProtoField.new("SDR control message type", "rocescope.sdr.ctrl.type", ftypes.STRING, nil, base.NONE, nil, "SDR control message type"))
field("rocescope.sdr.ctrl.msg_seq", "uint", "sdr", false, ProtoField.new("SDR control: posted-receive sequence number", "rocescope.sdr.ctrl.msg_seq", ftypes.UINT32, nil, base.DEC, nil, "SDR control: posted-receive sequence number"))
field("rocescope.sdr.ctrl.buf_len", "uint64", "sdr", false, ProtoField.new("SDR CTS: posted buffer length in bytes", "rocescope.sdr.ctrl.buf_len", ftypes.UINT64, nil, base.DEC, nil, "SDR CTS: posted buffer length in bytes"))
field("rocescope.sdr.ctrl.cum_ack", "uint", "sdr", false, ProtoField.new("SDR SR_ACK: index of the first missing chunk", "rocescope.sdr.ctrl.cum_ack", ftypes.UINT32, nil, base.DEC, nil, "SDR SR_ACK: index of the first missing chunk"))
field("rocescope.sdr.ctrl.sack_bits", "uint", "sdr", false, ProtoField.new("SDR SR_ACK: number of bitmap bits", "rocescope.sdr.ctrl.sack_bits", ftypes.UINT32, nil, base.DEC, nil, "SDR SR_ACK: number of bitmap bits"))
field("rocescope.sdr.ctrl.sack", "bytes", "sdr", false, ProtoField.new("SDR SR_ACK: chunk bitmap after cum_ack", "rocescope.sdr.ctrl.sack", ftypes.BYTES, nil, base.NONE, nil, "SDR SR_ACK: chunk bitmap after cum_ack"))
field("rocescope.sdr.ctrl.count", "uint", "sdr", false, ProtoField.new("SDR NACK: number of indices", "rocescope.sdr.ctrl.count", ftypes.UINT32, nil, base.DEC, nil, "SDR NACK: number of indices"))
field("rocescope.sdr.ctrl.indices", "uint", "sdr", true, ProtoField.new("SDR NACK: chunk (SR) or data-submessage (EC) indices", "rocescope.sdr.ctrl.indices", ftypes.UINT32, nil, base.DEC, nil, "SDR NACK: chunk (SR) or data-submessage (EC) indices"))
-- flor
field("rocescope.flor.hint", "bool", "flor", false, ProtoField.new("Flor hint: last WQE in the congestion window", "rocescope.flor.hint", ftypes.UINT8, BOOL_STRINGS, base.DEC, nil, "Flor hint: last WQE in the congestion window"))
field("rocescope.flor.mid", "uint", "flor", false, ProtoField.new("Flor message id (WRITE immediate)", "rocescope.flor.mid", ftypes.UINT32, nil, base.DEC, nil, "Flor message id (WRITE immediate)"))
field("rocescope.flor.chunk_off", "uint", "flor", false, ProtoField.new("Flor chunk offset in UNIT_SIZE units (WRITE immediate)", "rocescope.flor.chunk_off", ftypes.UINT32, nil, base.DEC, nil, "Flor chunk offset in UNIT_SIZE units (WRITE immediate)"))
field("rocescope.flor.send.type", "enum", "flor", false, ProtoField.new("Flor SEND header type", "rocescope.flor.send.type", ftypes.STRING, nil, base.NONE, nil, "Flor SEND header type"))
field("rocescope.flor.send.flags", "uint", "flor", false, ProtoField.new("Flor SEND header flags (bit 7 hint, bit 6 retransmission)", "rocescope.flor.send.flags", ftypes.UINT8, nil, base.DEC, nil, "Flor SEND header flags (bit 7 hint, bit 6 retransmission)"))
field("rocescope.flor.send.rn", "uint", "flor", false, ProtoField.new("Flor SEND reliable sequence number", "rocescope.flor.send.rn", ftypes.UINT32, nil, base.DEC, nil, "Flor SEND reliable sequence number"))
field("rocescope.flor.send.gn", "uint64", "flor", false, ProtoField.new("Flor global sequence number", "rocescope.flor.send.gn", ftypes.UINT64, nil, base.DEC, nil, "Flor global sequence number"))
field("rocescope.flor.send.write_rn", "uint", "flor", false, ProtoField.new("Flor WRITE_RETX: original WRITE reliable sequence number", "rocescope.flor.send.write_rn", ftypes.UINT32, nil, base.DEC, nil, "Flor WRITE_RETX: original WRITE reliable sequence number"))
field("rocescope.flor.send.body_len", "uint", "flor", false, ProtoField.new("Flor SEND header: message bytes after the header", "rocescope.flor.send.body_len", ftypes.UINT32, nil, base.DEC, nil, "Flor SEND header: message bytes after the header"))
field("rocescope.flor.addr.mid", "uint", "flor", false, ProtoField.new("Flor address exchange: message id", "rocescope.flor.addr.mid", ftypes.UINT32, nil, base.DEC, nil, "Flor address exchange: message id"))
field("rocescope.flor.addr.msg_len", "uint64", "flor", false, ProtoField.new("Flor ADDR_REQ: message length", "rocescope.flor.addr.msg_len", ftypes.UINT64, nil, base.DEC, nil, "Flor ADDR_REQ: message length"))
field("rocescope.flor.addr.r_key", "uint", "flor", false, ProtoField.new("Flor ADDR_RESP: remote key", "rocescope.flor.addr.r_key", ftypes.UINT32, nil, base.DEC, nil, "Flor ADDR_RESP: remote key"))
field("rocescope.flor.addr.va", "uint64", "flor", false, ProtoField.new("Flor ADDR_RESP: remote address", "rocescope.flor.addr.va", ftypes.UINT64, nil, base.DEC, nil, "Flor ADDR_RESP: remote address"))
field("rocescope.flor.addr.buf_len", "uint64", "flor", false, ProtoField.new("Flor ADDR_RESP: buffer length", "rocescope.flor.addr.buf_len", ftypes.UINT64, nil, base.DEC, nil, "Flor ADDR_RESP: buffer length"))
field("rocescope.flor.ack.qpn", "uint", "flor", false, ProtoField.new("Flor ACK: data QP acknowledged", "rocescope.flor.ack.qpn", ftypes.UINT32, nil, base.DEC, nil, "Flor ACK: data QP acknowledged"))
field("rocescope.flor.ack.bitmap", "bytes", "flor", false, ProtoField.new("Flor ACK: entry kinds (bit 31 = entry 0)", "rocescope.flor.ack.bitmap", ftypes.BYTES, nil, base.NONE, nil, "Flor ACK: entry kinds (bit 31 = entry 0)"))
field("rocescope.flor.ack.least_gn", "uint64", "flor", false, ProtoField.new("Flor ACK: least acknowledged global sequence number", "rocescope.flor.ack.least_gn", ftypes.UINT64, nil, base.DEC, nil, "Flor ACK: least acknowledged global sequence number"))
field("rocescope.flor.ack.delay_ns", "uint64", "flor", false, ProtoField.new("Flor ACK: ACK delay in nanoseconds", "rocescope.flor.ack.delay_ns", ftypes.UINT64, nil, base.DEC, nil, "Flor ACK: ACK delay in nanoseconds"))
field("rocescope.flor.ack.count", "uint", "flor", false, ProtoField.new("Flor ACK: number of entries", "rocescope.flor.ack.count", ftypes.UINT32, nil, base.DEC, nil, "Flor ACK: number of entries"))
field("rocescope.flor.ack.acked", "uint64", "flor", true, ProtoField.new("Flor ACK: acknowledged numbers (SEND entries as global numbers)", "rocescope.flor.ack.acked", ftypes.UINT64, nil, base.DEC, nil, "Flor ACK: acknowledged numbers (SEND entries as global numbers)"))
-- netrt
field("rocescope.netrt.type", "enum", "netrt", false, ProtoField.new("NetRT message type", "rocescope.netrt.type", ftypes.STRING, nil, base.NONE, nil, "NetRT message type"))
field("rocescope.netrt.epsn", "uint", "netrt", false, ProtoField.new("NetRT request: expected PSN at the destination ToR", "rocescope.netrt.epsn", ftypes.UINT24, nil, base.DEC, nil, "NetRT request: expected PSN at the destination ToR"))
field("rocescope.netrt.bitmap", "bytes", "netrt", false, ProtoField.new("NetRT request: PSNs ePSN+1+i held (bit 0 = last byte's LSB)", "rocescope.netrt.bitmap", ftypes.BYTES, nil, base.NONE, nil, "NetRT request: PSNs ePSN+1+i held (bit 0 = last byte's LSB)"))
field("rocescope.netrt.requested", "uint", "netrt", true, ProtoField.new("NetRT request: PSNs asked for", "rocescope.netrt.requested", ftypes.UINT24, nil, base.DEC, nil, "NetRT request: PSNs asked for"))
field("rocescope.netrt.unfulfilled_psn", "uint", "netrt", false, ProtoField.new("NetRT: PSN the source ToR could not resend", "rocescope.netrt.unfulfilled_psn", ftypes.UINT24, nil, base.DEC, nil, "NetRT: PSN the source ToR could not resend"))
field("rocescope.netrt.rtx_mark", "bool", "netrt", false, ProtoField.new("NetRT in-network retransmission mark (BTH byte 4 bit 0)", "rocescope.netrt.rtx_mark", ftypes.UINT8, BOOL_STRINGS, base.DEC, nil, "NetRT in-network retransmission mark (BTH byte 4 bit 0)"))
-- erd
field("rocescope.erd.type", "uint", "erd", false, ProtoField.new("ERD EETH type (1: part of a multi-packet message)", "rocescope.erd.type", ftypes.UINT8, nil, base.DEC, nil, "ERD EETH type (1: part of a multi-packet message)"))
field("rocescope.erd.last", "bool", "erd", false, ProtoField.new("ERD EETH: packet holds the message's final bytes", "rocescope.erd.last", ftypes.UINT8, BOOL_STRINGS, base.DEC, nil, "ERD EETH: packet holds the message's final bytes"))
field("rocescope.erd.msg_id", "uint", "erd", false, ProtoField.new("ERD EETH message id", "rocescope.erd.msg_id", ftypes.UINT16, nil, base.DEC, nil, "ERD EETH message id"))
field("rocescope.erd.s_len", "uint", "erd", false, ProtoField.new("ERD EETH: valid payload bytes after the EETH", "rocescope.erd.s_len", ftypes.UINT16, nil, base.DEC, nil, "ERD EETH: valid payload bytes after the EETH"))
field("rocescope.erd.s_offset", "uint", "erd", false, ProtoField.new("ERD EETH: byte offset of this payload in the message", "rocescope.erd.s_offset", ftypes.UINT32, nil, base.DEC, nil, "ERD EETH: byte offset of this payload in the message"))
field("rocescope.erd.nack.count", "uint", "erd", true, ProtoField.new("ERD NACK message: number of entries", "rocescope.erd.nack.count", ftypes.UINT16, nil, base.DEC, nil, "ERD NACK message: number of entries"))
field("rocescope.erd.nack.src_qpn", "uint", "erd", true, ProtoField.new("ERD NACK: source QPN", "rocescope.erd.nack.src_qpn", ftypes.UINT24, nil, base.DEC, nil, "ERD NACK: source QPN"))
field("rocescope.erd.nack.dst_qpn", "uint", "erd", true, ProtoField.new("ERD NACK: destination QPN", "rocescope.erd.nack.dst_qpn", ftypes.UINT24, nil, base.DEC, nil, "ERD NACK: destination QPN"))
field("rocescope.erd.nack.psn", "uint", "erd", true, ProtoField.new("ERD NACK: lost PSN", "rocescope.erd.nack.psn", ftypes.UINT24, nil, base.DEC, nil, "ERD NACK: lost PSN"))
ENUM_VALUES["rocescope.profile"] = {["std"] = true, ["dcp"] = true, ["sdr"] = true, ["flor"] = true, ["netrt"] = true, ["erd"] = true}
ENUM_VALUES["rocescope.aeth.kind"] = {["ack"] = true, ["rnr_nak"] = true, ["nak"] = true, ["reserved"] = true}
ENUM_VALUES["rocescope.icrc.status"] = {["good"] = true, ["bad"] = true, ["absent"] = true, ["truncated"] = true}
ENUM_VALUES["rocescope.vcrc.status"] = {["good"] = true, ["bad"] = true, ["absent"] = true, ["truncated"] = true}
ENUM_VALUES["rocescope.cm.msg"] = {["req"] = true, ["rep"] = true, ["rtu"] = true, ["dreq"] = true, ["drep"] = true, ["rej"] = true, ["mra"] = true}
ENUM_VALUES["rocescope.sdr.ctrl.type"] = {["cts"] = true, ["sr_ack"] = true, ["sr_nack"] = true, ["ec_ack"] = true, ["ec_nack"] = true}
ENUM_VALUES["rocescope.flor.send.type"] = {["data"] = true, ["write_retx"] = true, ["addr_req"] = true, ["addr_resp"] = true}
ENUM_VALUES["rocescope.netrt.type"] = {["request"] = true, ["unfulfilled"] = true}

-- ==== generated: the tree's groups (codec/src/field_group.rs) ====
local FIELD_GROUP = {
    ["rocescope.lrh.vl"] = "lrh",
    ["rocescope.lrh.lver"] = "lrh",
    ["rocescope.lrh.sl"] = "lrh",
    ["rocescope.lrh.lnh"] = "lrh",
    ["rocescope.lrh.dlid"] = "lrh",
    ["rocescope.lrh.pktlen"] = "lrh",
    ["rocescope.lrh.slid"] = "lrh",
    ["rocescope.bth.opcode"] = "bth",
    ["rocescope.bth.se"] = "bth",
    ["rocescope.bth.m"] = "bth",
    ["rocescope.bth.padcnt"] = "bth",
    ["rocescope.bth.tver"] = "bth",
    ["rocescope.bth.p_key"] = "bth",
    ["rocescope.bth.fecn"] = "bth",
    ["rocescope.bth.becn"] = "bth",
    ["rocescope.bth.destqp"] = "bth",
    ["rocescope.bth.a"] = "bth",
    ["rocescope.bth.psn"] = "bth",
    ["rocescope.rdeth.eecnxt"] = "rdeth",
    ["rocescope.deth.q_key"] = "deth",
    ["rocescope.deth.reserved"] = "deth",
    ["rocescope.deth.srcqp"] = "deth",
    ["rocescope.xrceth.xrcsrq"] = "xrceth",
    ["rocescope.reth.va"] = "reth",
    ["rocescope.reth.r_key"] = "reth",
    ["rocescope.reth.dmalen"] = "reth",
    ["rocescope.atomiceth.va"] = "atomiceth",
    ["rocescope.atomiceth.r_key"] = "atomiceth",
    ["rocescope.atomiceth.swapdt"] = "atomiceth",
    ["rocescope.atomiceth.cmpdt"] = "atomiceth",
    ["rocescope.aeth.syndrome"] = "aeth",
    ["rocescope.aeth.msn"] = "aeth",
    ["rocescope.aeth.kind"] = "aeth",
    ["rocescope.aeth.credit"] = "aeth",
    ["rocescope.aeth.rnr_timer"] = "aeth",
    ["rocescope.aeth.nak_code"] = "aeth",
    ["rocescope.irn.sack_psn"] = "irn",
    ["rocescope.atomicacketh.origremdt"] = "atomicacketh",
    ["rocescope.immdt"] = "immdt",
    ["rocescope.ieth.r_key"] = "ieth",
    ["rocescope.feth.sel"] = "feth",
    ["rocescope.feth.plt"] = "feth",
    ["rocescope.icrc"] = "icrc",
    ["rocescope.icrc.status"] = "icrc",
    ["rocescope.vcrc"] = "vcrc",
    ["rocescope.vcrc.status"] = "vcrc",
    ["rocescope.cm.msg"] = "cm",
    ["rocescope.cm.local_qpn"] = "cm",
    ["rocescope.cm.remote_qpn"] = "cm",
    ["rocescope.cm.start_psn"] = "cm",
    ["rocescope.cm.local_comm_id"] = "cm",
    ["rocescope.cm.remote_comm_id"] = "cm",
    ["rocescope.pfc.class_enable"] = "pfc",
    ["rocescope.pfc.quanta"] = "pfc",
    ["rocescope.dcp.tag"] = "dcp",
    ["rocescope.dcp.msn"] = "dcp",
    ["rocescope.dcp.sretryno"] = "dcp",
    ["rocescope.dcp.ssn"] = "dcp",
    ["rocescope.dcp.emsn"] = "dcp",
    ["rocescope.dcp.ho"] = "dcp",
    ["rocescope.sdr.msg_id"] = "sdr",
    ["rocescope.sdr.pkt_off"] = "sdr",
    ["rocescope.sdr.imm_frag"] = "sdr",
    ["rocescope.sdr.user_imm"] = "sdr",
    ["rocescope.sdr.va_ok"] = "sdr",
    ["rocescope.sdr.ctrl.type"] = "sdr.ctrl",
    ["rocescope.sdr.ctrl.msg_seq"] = "sdr.ctrl",
    ["rocescope.sdr.ctrl.buf_len"] = "sdr.ctrl",
    ["rocescope.sdr.ctrl.cum_ack"] = "sdr.ctrl",
    ["rocescope.sdr.ctrl.sack_bits"] = "sdr.ctrl",
    ["rocescope.sdr.ctrl.sack"] = "sdr.ctrl",
    ["rocescope.sdr.ctrl.count"] = "sdr.ctrl",
    ["rocescope.sdr.ctrl.indices"] = "sdr.ctrl",
    ["rocescope.flor.hint"] = "flor",
    ["rocescope.flor.mid"] = "flor",
    ["rocescope.flor.chunk_off"] = "flor",
    ["rocescope.flor.send.type"] = "flor.send",
    ["rocescope.flor.send.flags"] = "flor.send",
    ["rocescope.flor.send.rn"] = "flor.send",
    ["rocescope.flor.send.gn"] = "flor.send",
    ["rocescope.flor.send.write_rn"] = "flor.send",
    ["rocescope.flor.send.body_len"] = "flor.send",
    ["rocescope.flor.addr.mid"] = "flor.addr",
    ["rocescope.flor.addr.msg_len"] = "flor.addr",
    ["rocescope.flor.addr.r_key"] = "flor.addr",
    ["rocescope.flor.addr.va"] = "flor.addr",
    ["rocescope.flor.addr.buf_len"] = "flor.addr",
    ["rocescope.flor.ack.qpn"] = "flor.ack",
    ["rocescope.flor.ack.bitmap"] = "flor.ack",
    ["rocescope.flor.ack.least_gn"] = "flor.ack",
    ["rocescope.flor.ack.delay_ns"] = "flor.ack",
    ["rocescope.flor.ack.count"] = "flor.ack",
    ["rocescope.flor.ack.acked"] = "flor.ack",
    ["rocescope.netrt.type"] = "netrt",
    ["rocescope.netrt.epsn"] = "netrt",
    ["rocescope.netrt.bitmap"] = "netrt",
    ["rocescope.netrt.requested"] = "netrt",
    ["rocescope.netrt.unfulfilled_psn"] = "netrt",
    ["rocescope.netrt.rtx_mark"] = "netrt",
    ["rocescope.erd.type"] = "erd",
    ["rocescope.erd.last"] = "erd",
    ["rocescope.erd.msg_id"] = "erd",
    ["rocescope.erd.s_len"] = "erd",
    ["rocescope.erd.s_offset"] = "erd",
    ["rocescope.erd.nack.count"] = "erd.nack",
    ["rocescope.erd.nack.src_qpn"] = "erd.nack",
    ["rocescope.erd.nack.dst_qpn"] = "erd.nack",
    ["rocescope.erd.nack.psn"] = "erd.nack",
}
local GROUP_LABEL = {
    ["frame"] = "Frame",
    ["lrh"] = "Local Route Header (LRH)",
    ["bth"] = "Base Transport Header (BTH)",
    ["rdeth"] = "RDETH",
    ["deth"] = "DETH",
    ["xrceth"] = "XRCETH",
    ["reth"] = "RETH",
    ["atomiceth"] = "AtomicETH",
    ["aeth"] = "AETH",
    ["irn"] = "IRN selective NAK",
    ["atomicacketh"] = "AtomicAckETH",
    ["immdt"] = "ImmDt",
    ["ieth"] = "IETH",
    ["feth"] = "FETH",
    ["icrc"] = "Invariant CRC",
    ["vcrc"] = "Variant CRC",
    ["cm"] = "Connection Manager MAD",
    ["pfc"] = "PAUSE / PFC",
    ["dcp"] = "DCP",
    ["sdr"] = "SDR",
    ["sdr.ctrl"] = "SDR control message",
    ["flor"] = "Flor",
    ["flor.send"] = "Flor SEND header",
    ["flor.addr"] = "Flor address exchange",
    ["flor.ack"] = "Flor ACK",
    ["netrt"] = "NetRT",
    ["erd"] = "ERD EETH",
    ["erd.nack"] = "ERD NACK",
}

-- ==== generated: profiles (codec/src/profile.rs) and the parameter table (codec/src/params/table.rs) ====
local PROFILE_CHOICES = {"auto", "std", "dcp", "sdr", "flor", "netrt", "erd"}
local PROFILE_DEFAULT = "auto"
-- PARAM_DEFS: the transports' parameters in table order, as read_params parses their preferences
-- (ParamDef::parse): kind "uint" (a number of `bits` bits from 0 to `max`, a decimal string;
-- `optional`: blank text = derived), "split" (three widths adding up to 32) or "enum" (`values`);
-- `default` is the preference's default text.
local PARAM_DEFS = {
    {name = "dcp_tag_shift", kind = "uint", bits = 8, max = "6", optional = false, default = "2"},
    {name = "sdr_split", kind = "split", default = "10,18,4"},
    {name = "sdr_mtu", kind = "uint", bits = 32, max = "4294967295", optional = true, default = ""},
    {name = "sdr_max_message", kind = "uint", bits = 64, max = "18446744073709551615", optional = true, default = ""},
    {name = "sdr_chunk_packets", kind = "uint", bits = 32, max = "4294967295", optional = false, default = "1"},
    {name = "flor_split", kind = "split", default = "1,21,10"},
    {name = "flor_unit_size", kind = "uint", bits = 32, max = "4294967295", optional = false, default = "4096"},
    {name = "flor_ack_set_means", kind = "enum", values = {"send", "write"}, default = "send"},
    {name = "netrt_opcode", kind = "uint", bits = 8, max = "255", optional = false, default = "0xc0"},
    {name = "erd_nack_port", kind = "uint", bits = 16, max = "65535", optional = false, default = "4792"},
}
-- What a derived (optional) parameter falls back to: sdr_mtu (sdr::DEFAULT_MTU).
local PARAM_FALLBACK = {sdr_mtu = 4096}
-- The preferences: rocescope.profile (the command line's --profile), rocescope.verify_checksums
-- (Wireshark only: see template.lua), then rocescope.NAME, one per parameter: the table's titles,
-- defaults and help texts (with the flag's name); numbers and splits are strings, read as the flags
-- read them.
local function declare_param_prefs(proto)
    proto.prefs.profile = Pref.string("Profile", PROFILE_DEFAULT, "Transport profile: auto (detect per flow), std, dcp, sdr, flor, netrt, erd (--profile).")
    proto.prefs.verify_checksums = Pref.bool("Verify the ICRC and the IPv4 header checksum", false,
        "Compute the ICRC (rocescope.icrc.status, ICRC mismatch warnings) and the IPv4 header checksum, as "
            .. "rocescope decode does. Costly in Lua; off, they are not verified (no rocescope.icrc.status), "
            .. "as with Wireshark's own checksum validation.")
    proto.prefs.dcp_tag_shift = Pref.string("DCP tag shift", "2", "DCP: the tag is (ToS >> SHIFT) & 3 (SHIFT 0-6) (--dcp-tag-shift)")
    proto.prefs.sdr_split = Pref.string("SDR immediate split", "10,18,4", "SDR immediate split: message id, packet offset and user-immediate fragment bits, adding up to 32 (--sdr-split)")
    proto.prefs.sdr_mtu = Pref.string("SDR MTU", "", "SDR MTU in bytes (default: the DMA length of the flow's full-size packets, else 4096) (--sdr-mtu)")
    proto.prefs.sdr_max_message = Pref.string("SDR maximum message", "", "SDR maximum message size in bytes (default: 2^OFF x MTU) (--sdr-max-message)")
    proto.prefs.sdr_chunk_packets = Pref.string("SDR packets per chunk", "1", "SDR packets per chunk (--sdr-chunk-packets)")
    proto.prefs.flor_split = Pref.string("Flor immediate split", "1,21,10", "Flor immediate split: hint, message id and chunk offset bits, adding up to 32 (--flor-split)")
    proto.prefs.flor_unit_size = Pref.string("Flor UNIT_SIZE", "4096", "Flor UNIT_SIZE in bytes (--flor-unit-size)")
    proto.prefs.flor_ack_set_means = Pref.enum("Flor ACK set bit means", 1, "Flor ACK bitmap: what a set bit marks (send: a compressed SEND global number, write: a WRITE reliable number) (--flor-ack-set-means)",
        {{1, "send", 1}, {2, "write", 2}}, false)
    proto.prefs.netrt_opcode = Pref.string("NetRT opcode", "0xc0", "NetRT message BTH OpCode (--netrt-opcode)")
    proto.prefs.erd_nack_port = Pref.string("ERD NACK port", "4792", "ERD NACK TCP port (--erd-nack-port)")
end

-- ==== generated: the fixed-layout headers (codec/src/layout) and opcode tables (codec/src/ib/opcode.rs) ====
-- HDR[name] = {len = bytes, layer = name in warnings, fields = {...}}: the BTH, the extension headers,
-- IRN's SACK tail. Each field, in declaration order: {key = accessor, name = registry name (absent:
-- not shown), off = first byte, len = bytes (big-endian), and for a bit field shift = its lowest bit,
-- mask = its bits once shifted}.
local HDR = {
    lrh = {len = 8, layer = "LRH", fields = {
        {key = "vl", name = "rocescope.lrh.vl", off = 0, len = 1, shift = 4, mask = 0xf},
        {key = "lver", name = "rocescope.lrh.lver", off = 0, len = 1, shift = 0, mask = 0xf},
        {key = "sl", name = "rocescope.lrh.sl", off = 1, len = 1, shift = 4, mask = 0xf},
        {key = "resv2", off = 1, len = 1, shift = 2, mask = 0x3},
        {key = "lnh", name = "rocescope.lrh.lnh", off = 1, len = 1, shift = 0, mask = 0x3},
        {key = "dlid", name = "rocescope.lrh.dlid", off = 2, len = 2},
        {key = "resv5", off = 4, len = 2, shift = 11, mask = 0x1f},
        {key = "pkt_len", name = "rocescope.lrh.pktlen", off = 4, len = 2, shift = 0, mask = 0x7ff},
        {key = "slid", name = "rocescope.lrh.slid", off = 6, len = 2},
    }},
    bth = {len = 12, layer = "BTH", fields = {
        {key = "opcode", name = "rocescope.bth.opcode", off = 0, len = 1},
        {key = "se", name = "rocescope.bth.se", off = 1, len = 1, shift = 7, mask = 0x1},
        {key = "mig_req", name = "rocescope.bth.m", off = 1, len = 1, shift = 6, mask = 0x1},
        {key = "pad_cnt", name = "rocescope.bth.padcnt", off = 1, len = 1, shift = 4, mask = 0x3},
        {key = "tver", name = "rocescope.bth.tver", off = 1, len = 1, shift = 0, mask = 0xf},
        {key = "p_key", name = "rocescope.bth.p_key", off = 2, len = 2},
        {key = "fecn", name = "rocescope.bth.fecn", off = 4, len = 1, shift = 7, mask = 0x1},
        {key = "becn", name = "rocescope.bth.becn", off = 4, len = 1, shift = 6, mask = 0x1},
        {key = "resv6", off = 4, len = 1, shift = 0, mask = 0x3f},
        {key = "dest_qp", name = "rocescope.bth.destqp", off = 5, len = 3},
        {key = "ack_req", name = "rocescope.bth.a", off = 8, len = 1, shift = 7, mask = 0x1},
        {key = "psn", name = "rocescope.bth.psn", off = 9, len = 3},
    }},
    rdeth = {len = 4, layer = "RDETH", fields = {
        {key = "eecnxt", name = "rocescope.rdeth.eecnxt", off = 1, len = 3},
    }},
    deth = {len = 8, layer = "DETH", fields = {
        {key = "q_key", name = "rocescope.deth.q_key", off = 0, len = 4},
        {key = "reserved", name = "rocescope.deth.reserved", off = 4, len = 1},
        {key = "src_qp", name = "rocescope.deth.srcqp", off = 5, len = 3},
    }},
    xrceth = {len = 4, layer = "XRCETH", fields = {
        {key = "xrc_srq", name = "rocescope.xrceth.xrcsrq", off = 1, len = 3},
    }},
    dcpeth = {len = 4, layer = "DCPETH", fields = {
        {key = "msn", name = "rocescope.dcp.msn", off = 0, len = 3},
        {key = "sretryno", name = "rocescope.dcp.sretryno", off = 3, len = 1},
    }},
    feth = {len = 4, layer = "FETH", fields = {
        {key = "sel", name = "rocescope.feth.sel", off = 3, len = 1, shift = 4, mask = 0x3},
        {key = "plt", name = "rocescope.feth.plt", off = 3, len = 1, shift = 0, mask = 0xf},
    }},
    reth = {len = 16, layer = "RETH", fields = {
        {key = "va", name = "rocescope.reth.va", off = 0, len = 8},
        {key = "r_key", name = "rocescope.reth.r_key", off = 8, len = 4},
        {key = "dma_len", name = "rocescope.reth.dmalen", off = 12, len = 4},
    }},
    atomiceth = {len = 28, layer = "AtomicETH", fields = {
        {key = "va", name = "rocescope.atomiceth.va", off = 0, len = 8},
        {key = "r_key", name = "rocescope.atomiceth.r_key", off = 8, len = 4},
        {key = "swap_add", name = "rocescope.atomiceth.swapdt", off = 12, len = 8},
        {key = "compare", name = "rocescope.atomiceth.cmpdt", off = 20, len = 8},
    }},
    aeth = {len = 4, layer = "AETH", fields = {
        {key = "syndrome", name = "rocescope.aeth.syndrome", off = 0, len = 1},
        {key = "msn", name = "rocescope.aeth.msn", off = 1, len = 3},
    }},
    atomicacketh = {len = 8, layer = "AtomicAckETH", fields = {
        {key = "orig_rem_data", name = "rocescope.atomicacketh.origremdt", off = 0, len = 8},
    }},
    sseth = {len = 4, layer = "SSNETH", fields = {
        {key = "ssn", name = "rocescope.dcp.ssn", off = 0, len = 3},
    }},
    immdt = {len = 4, layer = "ImmDt", fields = {
        {key = "imm", name = "rocescope.immdt", off = 0, len = 4},
    }},
    ieth = {len = 4, layer = "IETH", fields = {
        {key = "r_key", name = "rocescope.ieth.r_key", off = 0, len = 4},
    }},
    irn_sack = {len = 4, layer = "IRN SACK", fields = {
        {key = "sack_psn", name = "rocescope.irn.sack_psn", off = 1, len = 3},
    }},
}
-- OPCODES[layout][opcode] = {name, hdrs = {{header, offset from the BTH}, ...} in wire order,
-- hdrs_len, payload (may carry one), cnp (16 reserved bytes)}; absent: outside the table.
-- Layouts: std (WIRE.md A.4), dcp_data (a DCP data packet, WIRE.md B.1).
local OPCODES = {std = {}, dcp_data = {}}
OPCODES.std[0x00] = {name = "RC SEND First", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.std[0x01] = {name = "RC SEND Middle", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.std[0x02] = {name = "RC SEND Last", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.std[0x03] = {name = "RC SEND Last with Immediate", hdrs = {{"immdt", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0x04] = {name = "RC SEND Only", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.std[0x05] = {name = "RC SEND Only with Immediate", hdrs = {{"immdt", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0x06] = {name = "RC RDMA WRITE First", hdrs = {{"reth", 12}}, hdrs_len = 16, payload = true, cnp = false}
OPCODES.std[0x07] = {name = "RC RDMA WRITE Middle", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.std[0x08] = {name = "RC RDMA WRITE Last", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.std[0x09] = {name = "RC RDMA WRITE Last with Immediate", hdrs = {{"immdt", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0x0a] = {name = "RC RDMA WRITE Only", hdrs = {{"reth", 12}}, hdrs_len = 16, payload = true, cnp = false}
OPCODES.std[0x0b] = {name = "RC RDMA WRITE Only with Immediate", hdrs = {{"reth", 12}, {"immdt", 28}}, hdrs_len = 20, payload = true, cnp = false}
OPCODES.std[0x0c] = {name = "RC RDMA READ Request", hdrs = {{"reth", 12}}, hdrs_len = 16, payload = false, cnp = false}
OPCODES.std[0x0d] = {name = "RC RDMA READ Response First", hdrs = {{"aeth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0x0e] = {name = "RC RDMA READ Response Middle", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.std[0x0f] = {name = "RC RDMA READ Response Last", hdrs = {{"aeth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0x10] = {name = "RC RDMA READ Response Only", hdrs = {{"aeth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0x11] = {name = "RC Acknowledge", hdrs = {{"aeth", 12}}, hdrs_len = 4, payload = false, cnp = false}
OPCODES.std[0x12] = {name = "RC ATOMIC Acknowledge", hdrs = {{"aeth", 12}, {"atomicacketh", 16}}, hdrs_len = 12, payload = false, cnp = false}
OPCODES.std[0x13] = {name = "RC CmpSwap", hdrs = {{"atomiceth", 12}}, hdrs_len = 28, payload = false, cnp = false}
OPCODES.std[0x14] = {name = "RC FetchAdd", hdrs = {{"atomiceth", 12}}, hdrs_len = 28, payload = false, cnp = false}
OPCODES.std[0x16] = {name = "RC SEND Last with Invalidate", hdrs = {{"ieth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0x17] = {name = "RC SEND Only with Invalidate", hdrs = {{"ieth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0x1c] = {name = "RC FLUSH", hdrs = {{"feth", 12}, {"reth", 16}}, hdrs_len = 20, payload = false, cnp = false}
OPCODES.std[0x1d] = {name = "RC ATOMIC WRITE", hdrs = {{"reth", 12}}, hdrs_len = 16, payload = true, cnp = false}
OPCODES.std[0x20] = {name = "UC SEND First", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.std[0x21] = {name = "UC SEND Middle", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.std[0x22] = {name = "UC SEND Last", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.std[0x23] = {name = "UC SEND Last with Immediate", hdrs = {{"immdt", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0x24] = {name = "UC SEND Only", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.std[0x25] = {name = "UC SEND Only with Immediate", hdrs = {{"immdt", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0x26] = {name = "UC RDMA WRITE First", hdrs = {{"reth", 12}}, hdrs_len = 16, payload = true, cnp = false}
OPCODES.std[0x27] = {name = "UC RDMA WRITE Middle", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.std[0x28] = {name = "UC RDMA WRITE Last", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.std[0x29] = {name = "UC RDMA WRITE Last with Immediate", hdrs = {{"immdt", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0x2a] = {name = "UC RDMA WRITE Only", hdrs = {{"reth", 12}}, hdrs_len = 16, payload = true, cnp = false}
OPCODES.std[0x2b] = {name = "UC RDMA WRITE Only with Immediate", hdrs = {{"reth", 12}, {"immdt", 28}}, hdrs_len = 20, payload = true, cnp = false}
OPCODES.std[0x40] = {name = "RD SEND First", hdrs = {{"rdeth", 12}, {"deth", 16}}, hdrs_len = 12, payload = true, cnp = false}
OPCODES.std[0x41] = {name = "RD SEND Middle", hdrs = {{"rdeth", 12}, {"deth", 16}}, hdrs_len = 12, payload = true, cnp = false}
OPCODES.std[0x42] = {name = "RD SEND Last", hdrs = {{"rdeth", 12}, {"deth", 16}}, hdrs_len = 12, payload = true, cnp = false}
OPCODES.std[0x43] = {name = "RD SEND Last with Immediate", hdrs = {{"rdeth", 12}, {"deth", 16}, {"immdt", 24}}, hdrs_len = 16, payload = true, cnp = false}
OPCODES.std[0x44] = {name = "RD SEND Only", hdrs = {{"rdeth", 12}, {"deth", 16}}, hdrs_len = 12, payload = true, cnp = false}
OPCODES.std[0x45] = {name = "RD SEND Only with Immediate", hdrs = {{"rdeth", 12}, {"deth", 16}, {"immdt", 24}}, hdrs_len = 16, payload = true, cnp = false}
OPCODES.std[0x46] = {name = "RD RDMA WRITE First", hdrs = {{"rdeth", 12}, {"deth", 16}, {"reth", 24}}, hdrs_len = 28, payload = true, cnp = false}
OPCODES.std[0x47] = {name = "RD RDMA WRITE Middle", hdrs = {{"rdeth", 12}, {"deth", 16}}, hdrs_len = 12, payload = true, cnp = false}
OPCODES.std[0x48] = {name = "RD RDMA WRITE Last", hdrs = {{"rdeth", 12}, {"deth", 16}}, hdrs_len = 12, payload = true, cnp = false}
OPCODES.std[0x49] = {name = "RD RDMA WRITE Last with Immediate", hdrs = {{"rdeth", 12}, {"deth", 16}, {"immdt", 24}}, hdrs_len = 16, payload = true, cnp = false}
OPCODES.std[0x4a] = {name = "RD RDMA WRITE Only", hdrs = {{"rdeth", 12}, {"deth", 16}, {"reth", 24}}, hdrs_len = 28, payload = true, cnp = false}
OPCODES.std[0x4b] = {name = "RD RDMA WRITE Only with Immediate", hdrs = {{"rdeth", 12}, {"deth", 16}, {"reth", 24}, {"immdt", 40}}, hdrs_len = 32, payload = true, cnp = false}
OPCODES.std[0x4c] = {name = "RD RDMA READ Request", hdrs = {{"rdeth", 12}, {"deth", 16}, {"reth", 24}}, hdrs_len = 28, payload = false, cnp = false}
OPCODES.std[0x4d] = {name = "RD RDMA READ Response First", hdrs = {{"rdeth", 12}, {"aeth", 16}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.std[0x4e] = {name = "RD RDMA READ Response Middle", hdrs = {{"rdeth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0x4f] = {name = "RD RDMA READ Response Last", hdrs = {{"rdeth", 12}, {"aeth", 16}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.std[0x50] = {name = "RD RDMA READ Response Only", hdrs = {{"rdeth", 12}, {"aeth", 16}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.std[0x51] = {name = "RD Acknowledge", hdrs = {{"rdeth", 12}, {"aeth", 16}}, hdrs_len = 8, payload = false, cnp = false}
OPCODES.std[0x52] = {name = "RD ATOMIC Acknowledge", hdrs = {{"rdeth", 12}, {"aeth", 16}, {"atomicacketh", 20}}, hdrs_len = 16, payload = false, cnp = false}
OPCODES.std[0x53] = {name = "RD CmpSwap", hdrs = {{"rdeth", 12}, {"deth", 16}, {"atomiceth", 24}}, hdrs_len = 40, payload = false, cnp = false}
OPCODES.std[0x54] = {name = "RD FetchAdd", hdrs = {{"rdeth", 12}, {"deth", 16}, {"atomiceth", 24}}, hdrs_len = 40, payload = false, cnp = false}
OPCODES.std[0x55] = {name = "RD RESYNC", hdrs = {{"rdeth", 12}, {"deth", 16}}, hdrs_len = 12, payload = false, cnp = false}
OPCODES.std[0x64] = {name = "UD SEND Only", hdrs = {{"deth", 12}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.std[0x65] = {name = "UD SEND Only with Immediate", hdrs = {{"deth", 12}, {"immdt", 20}}, hdrs_len = 12, payload = true, cnp = false}
OPCODES.std[0x80] = {name = "CNP", hdrs = {}, hdrs_len = 0, payload = false, cnp = true}
OPCODES.std[0x81] = {name = "CNP", hdrs = {}, hdrs_len = 0, payload = false, cnp = true}
OPCODES.std[0xa0] = {name = "XRC SEND First", hdrs = {{"xrceth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0xa1] = {name = "XRC SEND Middle", hdrs = {{"xrceth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0xa2] = {name = "XRC SEND Last", hdrs = {{"xrceth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0xa3] = {name = "XRC SEND Last with Immediate", hdrs = {{"xrceth", 12}, {"immdt", 16}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.std[0xa4] = {name = "XRC SEND Only", hdrs = {{"xrceth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0xa5] = {name = "XRC SEND Only with Immediate", hdrs = {{"xrceth", 12}, {"immdt", 16}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.std[0xa6] = {name = "XRC RDMA WRITE First", hdrs = {{"xrceth", 12}, {"reth", 16}}, hdrs_len = 20, payload = true, cnp = false}
OPCODES.std[0xa7] = {name = "XRC RDMA WRITE Middle", hdrs = {{"xrceth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0xa8] = {name = "XRC RDMA WRITE Last", hdrs = {{"xrceth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0xa9] = {name = "XRC RDMA WRITE Last with Immediate", hdrs = {{"xrceth", 12}, {"immdt", 16}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.std[0xaa] = {name = "XRC RDMA WRITE Only", hdrs = {{"xrceth", 12}, {"reth", 16}}, hdrs_len = 20, payload = true, cnp = false}
OPCODES.std[0xab] = {name = "XRC RDMA WRITE Only with Immediate", hdrs = {{"xrceth", 12}, {"reth", 16}, {"immdt", 32}}, hdrs_len = 24, payload = true, cnp = false}
OPCODES.std[0xac] = {name = "XRC RDMA READ Request", hdrs = {{"xrceth", 12}, {"reth", 16}}, hdrs_len = 20, payload = false, cnp = false}
OPCODES.std[0xad] = {name = "XRC RDMA READ Response First", hdrs = {{"aeth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0xae] = {name = "XRC RDMA READ Response Middle", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.std[0xaf] = {name = "XRC RDMA READ Response Last", hdrs = {{"aeth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0xb0] = {name = "XRC RDMA READ Response Only", hdrs = {{"aeth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.std[0xb1] = {name = "XRC Acknowledge", hdrs = {{"aeth", 12}}, hdrs_len = 4, payload = false, cnp = false}
OPCODES.std[0xb2] = {name = "XRC ATOMIC Acknowledge", hdrs = {{"aeth", 12}, {"atomicacketh", 16}}, hdrs_len = 12, payload = false, cnp = false}
OPCODES.std[0xb3] = {name = "XRC CmpSwap", hdrs = {{"xrceth", 12}, {"atomiceth", 16}}, hdrs_len = 32, payload = false, cnp = false}
OPCODES.std[0xb4] = {name = "XRC FetchAdd", hdrs = {{"xrceth", 12}, {"atomiceth", 16}}, hdrs_len = 32, payload = false, cnp = false}
OPCODES.std[0xb6] = {name = "XRC SEND Last with Invalidate", hdrs = {{"xrceth", 12}, {"ieth", 16}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.std[0xb7] = {name = "XRC SEND Only with Invalidate", hdrs = {{"xrceth", 12}, {"ieth", 16}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.dcp_data[0x00] = {name = "RC SEND First", hdrs = {{"dcpeth", 12}, {"sseth", 16}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.dcp_data[0x01] = {name = "RC SEND Middle", hdrs = {{"dcpeth", 12}, {"sseth", 16}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.dcp_data[0x02] = {name = "RC SEND Last", hdrs = {{"dcpeth", 12}, {"sseth", 16}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.dcp_data[0x03] = {name = "RC SEND Last with Immediate", hdrs = {{"dcpeth", 12}, {"sseth", 16}, {"immdt", 20}}, hdrs_len = 12, payload = true, cnp = false}
OPCODES.dcp_data[0x04] = {name = "RC SEND Only", hdrs = {{"dcpeth", 12}, {"sseth", 16}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.dcp_data[0x05] = {name = "RC SEND Only with Immediate", hdrs = {{"dcpeth", 12}, {"sseth", 16}, {"immdt", 20}}, hdrs_len = 12, payload = true, cnp = false}
OPCODES.dcp_data[0x06] = {name = "RC RDMA WRITE First", hdrs = {{"dcpeth", 12}, {"reth", 16}}, hdrs_len = 20, payload = true, cnp = false}
OPCODES.dcp_data[0x07] = {name = "RC RDMA WRITE Middle", hdrs = {{"dcpeth", 12}, {"reth", 16}}, hdrs_len = 20, payload = true, cnp = false}
OPCODES.dcp_data[0x08] = {name = "RC RDMA WRITE Last", hdrs = {{"dcpeth", 12}, {"reth", 16}}, hdrs_len = 20, payload = true, cnp = false}
OPCODES.dcp_data[0x09] = {name = "RC RDMA WRITE Last with Immediate", hdrs = {{"dcpeth", 12}, {"reth", 16}, {"sseth", 32}, {"immdt", 36}}, hdrs_len = 28, payload = true, cnp = false}
OPCODES.dcp_data[0x0a] = {name = "RC RDMA WRITE Only", hdrs = {{"dcpeth", 12}, {"reth", 16}}, hdrs_len = 20, payload = true, cnp = false}
OPCODES.dcp_data[0x0b] = {name = "RC RDMA WRITE Only with Immediate", hdrs = {{"dcpeth", 12}, {"reth", 16}, {"sseth", 32}, {"immdt", 36}}, hdrs_len = 28, payload = true, cnp = false}
OPCODES.dcp_data[0x0c] = {name = "RC RDMA READ Request", hdrs = {{"dcpeth", 12}, {"reth", 16}}, hdrs_len = 20, payload = false, cnp = false}
OPCODES.dcp_data[0x0d] = {name = "RC RDMA READ Response First", hdrs = {{"aeth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.dcp_data[0x0e] = {name = "RC RDMA READ Response Middle", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.dcp_data[0x0f] = {name = "RC RDMA READ Response Last", hdrs = {{"aeth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.dcp_data[0x10] = {name = "RC RDMA READ Response Only", hdrs = {{"aeth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.dcp_data[0x11] = {name = "RC Acknowledge", hdrs = {{"aeth", 12}}, hdrs_len = 4, payload = false, cnp = false}
OPCODES.dcp_data[0x12] = {name = "RC ATOMIC Acknowledge", hdrs = {{"aeth", 12}, {"atomicacketh", 16}}, hdrs_len = 12, payload = false, cnp = false}
OPCODES.dcp_data[0x13] = {name = "RC CmpSwap", hdrs = {{"atomiceth", 12}}, hdrs_len = 28, payload = false, cnp = false}
OPCODES.dcp_data[0x14] = {name = "RC FetchAdd", hdrs = {{"atomiceth", 12}}, hdrs_len = 28, payload = false, cnp = false}
OPCODES.dcp_data[0x16] = {name = "RC SEND Last with Invalidate", hdrs = {{"dcpeth", 12}, {"sseth", 16}, {"ieth", 20}}, hdrs_len = 12, payload = true, cnp = false}
OPCODES.dcp_data[0x17] = {name = "RC SEND Only with Invalidate", hdrs = {{"dcpeth", 12}, {"sseth", 16}, {"ieth", 20}}, hdrs_len = 12, payload = true, cnp = false}
OPCODES.dcp_data[0x1c] = {name = "RC FLUSH", hdrs = {{"feth", 12}, {"reth", 16}}, hdrs_len = 20, payload = false, cnp = false}
OPCODES.dcp_data[0x1d] = {name = "RC ATOMIC WRITE", hdrs = {{"reth", 12}}, hdrs_len = 16, payload = true, cnp = false}
OPCODES.dcp_data[0x20] = {name = "UC SEND First", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.dcp_data[0x21] = {name = "UC SEND Middle", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.dcp_data[0x22] = {name = "UC SEND Last", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.dcp_data[0x23] = {name = "UC SEND Last with Immediate", hdrs = {{"immdt", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.dcp_data[0x24] = {name = "UC SEND Only", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.dcp_data[0x25] = {name = "UC SEND Only with Immediate", hdrs = {{"immdt", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.dcp_data[0x26] = {name = "UC RDMA WRITE First", hdrs = {{"reth", 12}}, hdrs_len = 16, payload = true, cnp = false}
OPCODES.dcp_data[0x27] = {name = "UC RDMA WRITE Middle", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.dcp_data[0x28] = {name = "UC RDMA WRITE Last", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.dcp_data[0x29] = {name = "UC RDMA WRITE Last with Immediate", hdrs = {{"immdt", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.dcp_data[0x2a] = {name = "UC RDMA WRITE Only", hdrs = {{"reth", 12}}, hdrs_len = 16, payload = true, cnp = false}
OPCODES.dcp_data[0x2b] = {name = "UC RDMA WRITE Only with Immediate", hdrs = {{"reth", 12}, {"immdt", 28}}, hdrs_len = 20, payload = true, cnp = false}
OPCODES.dcp_data[0x40] = {name = "RD SEND First", hdrs = {{"rdeth", 12}, {"deth", 16}}, hdrs_len = 12, payload = true, cnp = false}
OPCODES.dcp_data[0x41] = {name = "RD SEND Middle", hdrs = {{"rdeth", 12}, {"deth", 16}}, hdrs_len = 12, payload = true, cnp = false}
OPCODES.dcp_data[0x42] = {name = "RD SEND Last", hdrs = {{"rdeth", 12}, {"deth", 16}}, hdrs_len = 12, payload = true, cnp = false}
OPCODES.dcp_data[0x43] = {name = "RD SEND Last with Immediate", hdrs = {{"rdeth", 12}, {"deth", 16}, {"immdt", 24}}, hdrs_len = 16, payload = true, cnp = false}
OPCODES.dcp_data[0x44] = {name = "RD SEND Only", hdrs = {{"rdeth", 12}, {"deth", 16}}, hdrs_len = 12, payload = true, cnp = false}
OPCODES.dcp_data[0x45] = {name = "RD SEND Only with Immediate", hdrs = {{"rdeth", 12}, {"deth", 16}, {"immdt", 24}}, hdrs_len = 16, payload = true, cnp = false}
OPCODES.dcp_data[0x46] = {name = "RD RDMA WRITE First", hdrs = {{"rdeth", 12}, {"deth", 16}, {"reth", 24}}, hdrs_len = 28, payload = true, cnp = false}
OPCODES.dcp_data[0x47] = {name = "RD RDMA WRITE Middle", hdrs = {{"rdeth", 12}, {"deth", 16}}, hdrs_len = 12, payload = true, cnp = false}
OPCODES.dcp_data[0x48] = {name = "RD RDMA WRITE Last", hdrs = {{"rdeth", 12}, {"deth", 16}}, hdrs_len = 12, payload = true, cnp = false}
OPCODES.dcp_data[0x49] = {name = "RD RDMA WRITE Last with Immediate", hdrs = {{"rdeth", 12}, {"deth", 16}, {"immdt", 24}}, hdrs_len = 16, payload = true, cnp = false}
OPCODES.dcp_data[0x4a] = {name = "RD RDMA WRITE Only", hdrs = {{"rdeth", 12}, {"deth", 16}, {"reth", 24}}, hdrs_len = 28, payload = true, cnp = false}
OPCODES.dcp_data[0x4b] = {name = "RD RDMA WRITE Only with Immediate", hdrs = {{"rdeth", 12}, {"deth", 16}, {"reth", 24}, {"immdt", 40}}, hdrs_len = 32, payload = true, cnp = false}
OPCODES.dcp_data[0x4c] = {name = "RD RDMA READ Request", hdrs = {{"rdeth", 12}, {"deth", 16}, {"reth", 24}}, hdrs_len = 28, payload = false, cnp = false}
OPCODES.dcp_data[0x4d] = {name = "RD RDMA READ Response First", hdrs = {{"rdeth", 12}, {"aeth", 16}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.dcp_data[0x4e] = {name = "RD RDMA READ Response Middle", hdrs = {{"rdeth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.dcp_data[0x4f] = {name = "RD RDMA READ Response Last", hdrs = {{"rdeth", 12}, {"aeth", 16}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.dcp_data[0x50] = {name = "RD RDMA READ Response Only", hdrs = {{"rdeth", 12}, {"aeth", 16}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.dcp_data[0x51] = {name = "RD Acknowledge", hdrs = {{"rdeth", 12}, {"aeth", 16}}, hdrs_len = 8, payload = false, cnp = false}
OPCODES.dcp_data[0x52] = {name = "RD ATOMIC Acknowledge", hdrs = {{"rdeth", 12}, {"aeth", 16}, {"atomicacketh", 20}}, hdrs_len = 16, payload = false, cnp = false}
OPCODES.dcp_data[0x53] = {name = "RD CmpSwap", hdrs = {{"rdeth", 12}, {"deth", 16}, {"atomiceth", 24}}, hdrs_len = 40, payload = false, cnp = false}
OPCODES.dcp_data[0x54] = {name = "RD FetchAdd", hdrs = {{"rdeth", 12}, {"deth", 16}, {"atomiceth", 24}}, hdrs_len = 40, payload = false, cnp = false}
OPCODES.dcp_data[0x55] = {name = "RD RESYNC", hdrs = {{"rdeth", 12}, {"deth", 16}}, hdrs_len = 12, payload = false, cnp = false}
OPCODES.dcp_data[0x64] = {name = "UD SEND Only", hdrs = {{"deth", 12}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.dcp_data[0x65] = {name = "UD SEND Only with Immediate", hdrs = {{"deth", 12}, {"immdt", 20}}, hdrs_len = 12, payload = true, cnp = false}
OPCODES.dcp_data[0x80] = {name = "CNP", hdrs = {}, hdrs_len = 0, payload = false, cnp = true}
OPCODES.dcp_data[0x81] = {name = "CNP", hdrs = {}, hdrs_len = 0, payload = false, cnp = true}
OPCODES.dcp_data[0xa0] = {name = "XRC SEND First", hdrs = {{"xrceth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.dcp_data[0xa1] = {name = "XRC SEND Middle", hdrs = {{"xrceth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.dcp_data[0xa2] = {name = "XRC SEND Last", hdrs = {{"xrceth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.dcp_data[0xa3] = {name = "XRC SEND Last with Immediate", hdrs = {{"xrceth", 12}, {"immdt", 16}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.dcp_data[0xa4] = {name = "XRC SEND Only", hdrs = {{"xrceth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.dcp_data[0xa5] = {name = "XRC SEND Only with Immediate", hdrs = {{"xrceth", 12}, {"immdt", 16}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.dcp_data[0xa6] = {name = "XRC RDMA WRITE First", hdrs = {{"xrceth", 12}, {"reth", 16}}, hdrs_len = 20, payload = true, cnp = false}
OPCODES.dcp_data[0xa7] = {name = "XRC RDMA WRITE Middle", hdrs = {{"xrceth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.dcp_data[0xa8] = {name = "XRC RDMA WRITE Last", hdrs = {{"xrceth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.dcp_data[0xa9] = {name = "XRC RDMA WRITE Last with Immediate", hdrs = {{"xrceth", 12}, {"immdt", 16}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.dcp_data[0xaa] = {name = "XRC RDMA WRITE Only", hdrs = {{"xrceth", 12}, {"reth", 16}}, hdrs_len = 20, payload = true, cnp = false}
OPCODES.dcp_data[0xab] = {name = "XRC RDMA WRITE Only with Immediate", hdrs = {{"xrceth", 12}, {"reth", 16}, {"immdt", 32}}, hdrs_len = 24, payload = true, cnp = false}
OPCODES.dcp_data[0xac] = {name = "XRC RDMA READ Request", hdrs = {{"xrceth", 12}, {"reth", 16}}, hdrs_len = 20, payload = false, cnp = false}
OPCODES.dcp_data[0xad] = {name = "XRC RDMA READ Response First", hdrs = {{"aeth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.dcp_data[0xae] = {name = "XRC RDMA READ Response Middle", hdrs = {}, hdrs_len = 0, payload = true, cnp = false}
OPCODES.dcp_data[0xaf] = {name = "XRC RDMA READ Response Last", hdrs = {{"aeth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.dcp_data[0xb0] = {name = "XRC RDMA READ Response Only", hdrs = {{"aeth", 12}}, hdrs_len = 4, payload = true, cnp = false}
OPCODES.dcp_data[0xb1] = {name = "XRC Acknowledge", hdrs = {{"aeth", 12}}, hdrs_len = 4, payload = false, cnp = false}
OPCODES.dcp_data[0xb2] = {name = "XRC ATOMIC Acknowledge", hdrs = {{"aeth", 12}, {"atomicacketh", 16}}, hdrs_len = 12, payload = false, cnp = false}
OPCODES.dcp_data[0xb3] = {name = "XRC CmpSwap", hdrs = {{"xrceth", 12}, {"atomiceth", 16}}, hdrs_len = 32, payload = false, cnp = false}
OPCODES.dcp_data[0xb4] = {name = "XRC FetchAdd", hdrs = {{"xrceth", 12}, {"atomiceth", 16}}, hdrs_len = 32, payload = false, cnp = false}
OPCODES.dcp_data[0xb6] = {name = "XRC SEND Last with Invalidate", hdrs = {{"xrceth", 12}, {"ieth", 16}}, hdrs_len = 8, payload = true, cnp = false}
OPCODES.dcp_data[0xb7] = {name = "XRC SEND Only with Invalidate", hdrs = {{"xrceth", 12}, {"ieth", 16}}, hdrs_len = 8, payload = true, cnp = false}

-- ==== generated: CM messages by MAD attribute id (codec/src/ib/cm.rs) ====
local CM_MSGS = {[0x0010] = "req", [0x0011] = "mra", [0x0012] = "rej", [0x0013] = "rep", [0x0014] = "rtu", [0x0015] = "dreq", [0x0016] = "drep"}

-- ==== generated: warning texts (codec/src/warning.rs: Layer::name, templates) ====
-- LAYER[key] = Layer::name.
local LAYER = {
    link = "link header", lrh = "LRH", vlan = "VLAN tag", ipv4 = "IPv4 header", ipv6 = "IPv6 header", grh = "GRH",
    udp = "UDP header", bth = "BTH", rdeth = "RDETH", deth = "DETH", xrceth = "XRCETH", feth = "FETH",
    reth = "RETH", atomiceth = "AtomicETH", aeth = "AETH", atomicacketh = "AtomicAckETH", immdt = "ImmDt", ieth = "IETH",
    irn_sack = "IRN SACK", cnp = "CNP reserved bytes", payload = "payload", icrc = "ICRC", vcrc = "VCRC", cm = "CM MAD",
    pfc = "MAC control frame", dcpeth = "DCPETH", sseth = "SSNETH", tcp = "TCP header", sdr = "SDR control message", sdr_data = "SDR data packet",
    flor = "Flor header", flor_ack = "Flor ACK", netrt = "NetRT message", erd = "ERD header", erd_nack = "ERD NACK stream", detection = "profile detection",
}
-- W.<key>(values...): the text of a warning (Warning's Display), X.<key>(values...): of an
-- extension problem (ExtProblem's Display), each from its template; the values narrowed as
-- the codec stores them.
local W, X = {}, {}
function W.truncated(layer, need, have)
    return string.format("truncated in %s: %d of %d bytes captured", layer, have % 65536, need % 65536)
end
function W.beyond_frame(layer, claimed, available)
    if layer == LAYER.ipv4 then return string.format("IPv4 total length %d exceeds the %d bytes in the frame", claimed, available) end
    if layer == LAYER.ipv6 then return string.format("IPv6 packet length %d exceeds the %d bytes in the frame", claimed, available) end
    if layer == LAYER.grh then return string.format("GRH PayLen %d exceeds the %d bytes after the GRH", claimed, available) end
    return string.format("%s length %d exceeds the %d bytes in the frame", layer, claimed, available)
end
function W.too_short(layer, claimed, minimum)
    return string.format("%s length %d is below the minimum %d", layer, claimed, minimum)
end
function W.ip_udp_mismatch(ip_payload, udp)
    return string.format("IP payload length %d and UDP length %d disagree", ip_payload % 65536, udp % 65536)
end
function W.unknown_opcode(op)
    return string.format("unknown opcode 0x%02x: payload left opaque", op)
end
W.cnp_0x80 = "opcode 0x80 read as CNP (hardware sends 0x81)"
function W.pad_too_large(padcnt, available)
    return string.format("PadCnt %d exceeds the %d bytes after the headers", padcnt, available % 65536)
end
function W.pad_no_payload(padcnt)
    return string.format("PadCnt %d on an opcode that carries no payload", padcnt)
end
function W.unexpected_payload(len)
    return string.format("%d payload bytes on an opcode that carries no payload", math.min(len, 65535))
end
function W.atomic_write_length(len)
    return string.format("ATOMIC WRITE carries %d payload bytes instead of 8", len % 65536)
end
function W.tver(tver)
    return string.format("BTH TVer %d (expected 0)", tver)
end
function W.aeth_reserved(syndrome)
    return string.format("AETH syndrome 0x%02x uses a reserved pattern", syndrome)
end
function W.icrc_mismatch(wire, computed)
    return string.format("ICRC mismatch: wire %08x computed %08x", wire, computed)
end
function W.vcrc_mismatch(wire, computed)
    return string.format("VCRC mismatch: wire %04x computed %04x", wire, computed)
end
function W.ipv4_checksum(wire, computed)
    return string.format("IPv4 header checksum 0x%04x where 0x%04x was expected", wire, computed)
end
function W.cm_attribute(attribute)
    return string.format("CM MAD attribute 0x%04x not decoded", attribute)
end
function W.mac_control_opcode(opcode)
    return string.format("MAC control opcode 0x%04x not decoded", opcode)
end
function W.header_only_length(len)
    return string.format("DCP header-only packet with %d bytes after UDP (expected BTH + 3)", math.min(len, 65535))
end
function W.ext(layer, what)
    return string.format("%s: %s", layer, what)
end
function W.unsupported(what)
    return string.format("not decoded: %s", what)
end
function W.not_kept(count)
    return string.format("%d more problems not listed", math.min(count, 65535))
end
function X.magic(got, want)
    return string.format("magic 0x%02x (expected 0x%02x)", got, want)
end
function X.version(got, want)
    return string.format("version %d (expected %d)", got, want)
end
function X.type(code)
    return string.format("unknown type %d", code)
end
function X.body_length(got, want)
    return string.format("body of %d bytes where its type needs %d", math.min(got, 4294967295), math.min(want, 4294967295))
end
function X.short(got, want)
    return string.format("only %d of %d bytes present", math.min(got, 4294967295), math.min(want, 4294967295))
end
function X.mismatch(field, got, want)
    return string.format("%s %d disagrees with %d", field, math.min(got, 4294967295), math.min(want, 4294967295))
end
function X.note(note)
    return string.format("%s", note)
end
W.vlan_depth = "not decoded: more than two VLAN tags"
W.ipv4_fragment = "not decoded: IPv4 fragment"
W.ipv6_ext = "not decoded: IPv6 extension headers"
W.grh_next_header = "not decoded: GRH next header is not the IBA transport"
W.lrh_raw_packet = "not decoded: raw packet (LRH LNH 0 or 1)"
-- Whether a text is a Truncated warning's (Warnings::problem_count leaves those out).
function W.is_truncated(text) return text:sub(1, 13) == "truncated in " end

-- ==== generated: the extensions' texts and limits (codec/src/warning.rs, field.rs, ext/, decoder/) ====
-- NOTE[key] = Note::text (the fixed problems of Warning::Ext).
local NOTE = {
    sdr_fragment_conflict = "user-immediate fragment differs from the one seen before",
    sdr_va_mismatch = "RETH VA does not match the immediate's message id and offset",
    sdr_ctrl_flags = "flags byte is not 0",
    sdr_sack_trailing_bits = "bitmap bits beyond sack_bits are not 0",
    flor_reserved = "reserved flag bits or reserved byte are not 0",
    flor_write_rn_not_retx = "write_rn is not 0 on a header that is not WRITE_RETX",
    flor_ack_length = "payload is not 24 + 4n bytes with 1 <= n <= 32",
    flor_ack_bitmap_beyond = "bitmap marks entries beyond the last one",
    flor_ack_qpn_high = "top byte of the acknowledged QP number is not 0",
    netrt_bth_flags = "BTH SE/M/PadCnt/TVer/byte 4/A must be 0",
    erd_stream_gap = "bytes missing in the NACK stream; resynchronised",
    erd_nack_too_long = "message longer than the reassembly limit; resynchronised",
    detection_ambiguous = "several detection rules match this flow; decoded as std",
    dcp_unconfirmed = "DCP tag set but no header-only packet or consistent WRITE layout confirms DCP (rule dcp); decoded as std",
}
-- Type codes 1, 2, ... of SDR control messages and Flor SEND headers.
local SDR_CTRL = {"cts", "sr_ack", "sr_nack", "ec_ack", "ec_nack"}
local FLOR_SEND = {"data", "write_retx", "addr_req", "addr_resp"}
-- Limits: warnings listed per frame, the decoder's memory.
local LIMITS = {
    warnings = 8,
    dcp_unsure_after = 8,
    patience = 256,
    sdr_flows = 4096,
    sdr_msgs_per_flow = 256,
    nack_message_len = 786424,
}

-- ==== generated: opcode sets, each of the Rust predicate it names tried on all 256 opcodes ====
local OPS = {}
-- Opcode::name (the standard table's names, else Unknown / Vendor-specific).
OPS.name = {[0x00] = "RC SEND First", [0x01] = "RC SEND Middle", [0x02] = "RC SEND Last", [0x03] = "RC SEND Last with Immediate", [0x04] = "RC SEND Only", [0x05] = "RC SEND Only with Immediate", [0x06] = "RC RDMA WRITE First", [0x07] = "RC RDMA WRITE Middle", 
    [0x08] = "RC RDMA WRITE Last", [0x09] = "RC RDMA WRITE Last with Immediate", [0x0a] = "RC RDMA WRITE Only", [0x0b] = "RC RDMA WRITE Only with Immediate", [0x0c] = "RC RDMA READ Request", [0x0d] = "RC RDMA READ Response First", [0x0e] = "RC RDMA READ Response Middle", [0x0f] = "RC RDMA READ Response Last", 
    [0x10] = "RC RDMA READ Response Only", [0x11] = "RC Acknowledge", [0x12] = "RC ATOMIC Acknowledge", [0x13] = "RC CmpSwap", [0x14] = "RC FetchAdd", [0x15] = "Unknown", [0x16] = "RC SEND Last with Invalidate", [0x17] = "RC SEND Only with Invalidate", 
    [0x18] = "Unknown", [0x19] = "Unknown", [0x1a] = "Unknown", [0x1b] = "Unknown", [0x1c] = "RC FLUSH", [0x1d] = "RC ATOMIC WRITE", [0x1e] = "Unknown", [0x1f] = "Unknown", 
    [0x20] = "UC SEND First", [0x21] = "UC SEND Middle", [0x22] = "UC SEND Last", [0x23] = "UC SEND Last with Immediate", [0x24] = "UC SEND Only", [0x25] = "UC SEND Only with Immediate", [0x26] = "UC RDMA WRITE First", [0x27] = "UC RDMA WRITE Middle", 
    [0x28] = "UC RDMA WRITE Last", [0x29] = "UC RDMA WRITE Last with Immediate", [0x2a] = "UC RDMA WRITE Only", [0x2b] = "UC RDMA WRITE Only with Immediate", [0x2c] = "Unknown", [0x2d] = "Unknown", [0x2e] = "Unknown", [0x2f] = "Unknown", 
    [0x30] = "Unknown", [0x31] = "Unknown", [0x32] = "Unknown", [0x33] = "Unknown", [0x34] = "Unknown", [0x35] = "Unknown", [0x36] = "Unknown", [0x37] = "Unknown", 
    [0x38] = "Unknown", [0x39] = "Unknown", [0x3a] = "Unknown", [0x3b] = "Unknown", [0x3c] = "Unknown", [0x3d] = "Unknown", [0x3e] = "Unknown", [0x3f] = "Unknown", 
    [0x40] = "RD SEND First", [0x41] = "RD SEND Middle", [0x42] = "RD SEND Last", [0x43] = "RD SEND Last with Immediate", [0x44] = "RD SEND Only", [0x45] = "RD SEND Only with Immediate", [0x46] = "RD RDMA WRITE First", [0x47] = "RD RDMA WRITE Middle", 
    [0x48] = "RD RDMA WRITE Last", [0x49] = "RD RDMA WRITE Last with Immediate", [0x4a] = "RD RDMA WRITE Only", [0x4b] = "RD RDMA WRITE Only with Immediate", [0x4c] = "RD RDMA READ Request", [0x4d] = "RD RDMA READ Response First", [0x4e] = "RD RDMA READ Response Middle", [0x4f] = "RD RDMA READ Response Last", 
    [0x50] = "RD RDMA READ Response Only", [0x51] = "RD Acknowledge", [0x52] = "RD ATOMIC Acknowledge", [0x53] = "RD CmpSwap", [0x54] = "RD FetchAdd", [0x55] = "RD RESYNC", [0x56] = "Unknown", [0x57] = "Unknown", 
    [0x58] = "Unknown", [0x59] = "Unknown", [0x5a] = "Unknown", [0x5b] = "Unknown", [0x5c] = "Unknown", [0x5d] = "Unknown", [0x5e] = "Unknown", [0x5f] = "Unknown", 
    [0x60] = "Unknown", [0x61] = "Unknown", [0x62] = "Unknown", [0x63] = "Unknown", [0x64] = "UD SEND Only", [0x65] = "UD SEND Only with Immediate", [0x66] = "Unknown", [0x67] = "Unknown", 
    [0x68] = "Unknown", [0x69] = "Unknown", [0x6a] = "Unknown", [0x6b] = "Unknown", [0x6c] = "Unknown", [0x6d] = "Unknown", [0x6e] = "Unknown", [0x6f] = "Unknown", 
    [0x70] = "Unknown", [0x71] = "Unknown", [0x72] = "Unknown", [0x73] = "Unknown", [0x74] = "Unknown", [0x75] = "Unknown", [0x76] = "Unknown", [0x77] = "Unknown", 
    [0x78] = "Unknown", [0x79] = "Unknown", [0x7a] = "Unknown", [0x7b] = "Unknown", [0x7c] = "Unknown", [0x7d] = "Unknown", [0x7e] = "Unknown", [0x7f] = "Unknown", 
    [0x80] = "CNP", [0x81] = "CNP", [0x82] = "Unknown", [0x83] = "Unknown", [0x84] = "Unknown", [0x85] = "Unknown", [0x86] = "Unknown", [0x87] = "Unknown", 
    [0x88] = "Unknown", [0x89] = "Unknown", [0x8a] = "Unknown", [0x8b] = "Unknown", [0x8c] = "Unknown", [0x8d] = "Unknown", [0x8e] = "Unknown", [0x8f] = "Unknown", 
    [0x90] = "Unknown", [0x91] = "Unknown", [0x92] = "Unknown", [0x93] = "Unknown", [0x94] = "Unknown", [0x95] = "Unknown", [0x96] = "Unknown", [0x97] = "Unknown", 
    [0x98] = "Unknown", [0x99] = "Unknown", [0x9a] = "Unknown", [0x9b] = "Unknown", [0x9c] = "Unknown", [0x9d] = "Unknown", [0x9e] = "Unknown", [0x9f] = "Unknown", 
    [0xa0] = "XRC SEND First", [0xa1] = "XRC SEND Middle", [0xa2] = "XRC SEND Last", [0xa3] = "XRC SEND Last with Immediate", [0xa4] = "XRC SEND Only", [0xa5] = "XRC SEND Only with Immediate", [0xa6] = "XRC RDMA WRITE First", [0xa7] = "XRC RDMA WRITE Middle", 
    [0xa8] = "XRC RDMA WRITE Last", [0xa9] = "XRC RDMA WRITE Last with Immediate", [0xaa] = "XRC RDMA WRITE Only", [0xab] = "XRC RDMA WRITE Only with Immediate", [0xac] = "XRC RDMA READ Request", [0xad] = "XRC RDMA READ Response First", [0xae] = "XRC RDMA READ Response Middle", [0xaf] = "XRC RDMA READ Response Last", 
    [0xb0] = "XRC RDMA READ Response Only", [0xb1] = "XRC Acknowledge", [0xb2] = "XRC ATOMIC Acknowledge", [0xb3] = "XRC CmpSwap", [0xb4] = "XRC FetchAdd", [0xb5] = "Unknown", [0xb6] = "XRC SEND Last with Invalidate", [0xb7] = "XRC SEND Only with Invalidate", 
    [0xb8] = "Unknown", [0xb9] = "Unknown", [0xba] = "Unknown", [0xbb] = "Unknown", [0xbc] = "Unknown", [0xbd] = "Unknown", [0xbe] = "Unknown", [0xbf] = "Unknown", 
    [0xc0] = "Vendor-specific", [0xc1] = "Vendor-specific", [0xc2] = "Vendor-specific", [0xc3] = "Vendor-specific", [0xc4] = "Vendor-specific", [0xc5] = "Vendor-specific", [0xc6] = "Vendor-specific", [0xc7] = "Vendor-specific", 
    [0xc8] = "Vendor-specific", [0xc9] = "Vendor-specific", [0xca] = "Vendor-specific", [0xcb] = "Vendor-specific", [0xcc] = "Vendor-specific", [0xcd] = "Vendor-specific", [0xce] = "Vendor-specific", [0xcf] = "Vendor-specific", 
    [0xd0] = "Vendor-specific", [0xd1] = "Vendor-specific", [0xd2] = "Vendor-specific", [0xd3] = "Vendor-specific", [0xd4] = "Vendor-specific", [0xd5] = "Vendor-specific", [0xd6] = "Vendor-specific", [0xd7] = "Vendor-specific", 
    [0xd8] = "Vendor-specific", [0xd9] = "Vendor-specific", [0xda] = "Vendor-specific", [0xdb] = "Vendor-specific", [0xdc] = "Vendor-specific", [0xdd] = "Vendor-specific", [0xde] = "Vendor-specific", [0xdf] = "Vendor-specific", 
    [0xe0] = "Vendor-specific", [0xe1] = "Vendor-specific", [0xe2] = "Vendor-specific", [0xe3] = "Vendor-specific", [0xe4] = "Vendor-specific", [0xe5] = "Vendor-specific", [0xe6] = "Vendor-specific", [0xe7] = "Vendor-specific", 
    [0xe8] = "Vendor-specific", [0xe9] = "Vendor-specific", [0xea] = "Vendor-specific", [0xeb] = "Vendor-specific", [0xec] = "Vendor-specific", [0xed] = "Vendor-specific", [0xee] = "Vendor-specific", [0xef] = "Vendor-specific", 
    [0xf0] = "Vendor-specific", [0xf1] = "Vendor-specific", [0xf2] = "Vendor-specific", [0xf3] = "Vendor-specific", [0xf4] = "Vendor-specific", [0xf5] = "Vendor-specific", [0xf6] = "Vendor-specific", [0xf7] = "Vendor-specific", 
    [0xf8] = "Vendor-specific", [0xf9] = "Vendor-specific", [0xfa] = "Vendor-specific", [0xfb] = "Vendor-specific", [0xfc] = "Vendor-specific", [0xfd] = "Vendor-specific", [0xfe] = "Vendor-specific", [0xff] = "Vendor-specific"}
-- Opcode::is_write, Opcode::position, transport UD (Opcode::transport).
OPS.write = {[0x06] = true, [0x07] = true, [0x08] = true, [0x09] = true, [0x0a] = true, [0x0b] = true, [0x26] = true, [0x27] = true, 
    [0x28] = true, [0x29] = true, [0x2a] = true, [0x2b] = true, [0x46] = true, [0x47] = true, [0x48] = true, [0x49] = true, 
    [0x4a] = true, [0x4b] = true, [0xa6] = true, [0xa7] = true, [0xa8] = true, [0xa9] = true, [0xaa] = true, [0xab] = true}
OPS.position = {[0x00] = "first", [0x01] = "middle", [0x02] = "last", [0x03] = "last", [0x04] = "only", [0x05] = "only", [0x06] = "first", [0x07] = "middle", 
    [0x08] = "last", [0x09] = "last", [0x0a] = "only", [0x0b] = "only", [0x0c] = "only", [0x0d] = "first", [0x0e] = "middle", [0x0f] = "last", 
    [0x10] = "only", [0x13] = "only", [0x14] = "only", [0x16] = "last", [0x17] = "only", [0x1c] = "only", [0x1d] = "only", [0x20] = "first", 
    [0x21] = "middle", [0x22] = "last", [0x23] = "last", [0x24] = "only", [0x25] = "only", [0x26] = "first", [0x27] = "middle", [0x28] = "last", 
    [0x29] = "last", [0x2a] = "only", [0x2b] = "only", [0x40] = "first", [0x41] = "middle", [0x42] = "last", [0x43] = "last", [0x44] = "only", 
    [0x45] = "only", [0x46] = "first", [0x47] = "middle", [0x48] = "last", [0x49] = "last", [0x4a] = "only", [0x4b] = "only", [0x4c] = "only", 
    [0x4d] = "first", [0x4e] = "middle", [0x4f] = "last", [0x50] = "only", [0x53] = "only", [0x54] = "only", [0x55] = "only", [0x64] = "only", 
    [0x65] = "only", [0xa0] = "first", [0xa1] = "middle", [0xa2] = "last", [0xa3] = "last", [0xa4] = "only", [0xa5] = "only", [0xa6] = "first", 
    [0xa7] = "middle", [0xa8] = "last", [0xa9] = "last", [0xaa] = "only", [0xab] = "only", [0xac] = "only", [0xad] = "first", [0xae] = "middle", 
    [0xaf] = "last", [0xb0] = "only", [0xb3] = "only", [0xb4] = "only", [0xb6] = "last", [0xb7] = "only"}
OPS.ud = {[0x60] = true, [0x61] = true, [0x62] = true, [0x63] = true, [0x64] = true, [0x65] = true, [0x66] = true, [0x67] = true, 
    [0x68] = true, [0x69] = true, [0x6a] = true, [0x6b] = true, [0x6c] = true, [0x6d] = true, [0x6e] = true, [0x6f] = true, 
    [0x70] = true, [0x71] = true, [0x72] = true, [0x73] = true, [0x74] = true, [0x75] = true, [0x76] = true, [0x77] = true, 
    [0x78] = true, [0x79] = true, [0x7a] = true, [0x7b] = true, [0x7c] = true, [0x7d] = true, [0x7e] = true, [0x7f] = true}
OPS.cnp_0x80 = {[0x80] = true}
OPS.irn_sack = {[0x11] = true}
OPS.rc_atomic_write = {[0x1d] = true}
-- CM MADs ride on this opcode (ib/cm.rs OPCODE).
OPS.cm = {[0x64] = true}
-- DCP: Opcode::is_dcp_request (carry DCP headers), dcp::OPCODE_ACK (eMSN under tag 01).
OPS.dcp_request = {[0x00] = true, [0x01] = true, [0x02] = true, [0x03] = true, [0x04] = true, [0x05] = true, [0x06] = true, [0x07] = true, 
    [0x08] = true, [0x09] = true, [0x0a] = true, [0x0b] = true, [0x0c] = true, [0x16] = true, [0x17] = true}
OPS.dcp_ack = {[0x11] = true}
-- SDR: sdr::OPCODE_DATA, sdr::is_ctrl_opcode.
OPS.sdr_data = {[0x2b] = true}
OPS.sdr_ctrl = {[0x24] = true, [0x64] = true}
-- Flor: flor::is_write_imm, flor::send_header_only (opcode -> whether a SEND Only),
-- flor::OPCODE_ACK.
OPS.flor_write_imm = {[0x09] = true, [0x0b] = true, [0x29] = true, [0x2b] = true}
OPS.flor_send_header = {[0x00] = false, [0x04] = true, [0x05] = true, [0x20] = false, [0x24] = true, [0x25] = true}
OPS.flor_ack = {[0x64] = true}
-- ERD: erd::carries_eeth.
OPS.erd_eeth = {[0x44] = true, [0x45] = true, [0x64] = true, [0x65] = true}

-- ==== generated: the extensions' constants and byte layouts (codec/src/ext/*.rs, ib/cm.rs, mac_control.rs) ====
-- K.<module>.<constant>: magic numbers, versions, type codes, lengths, flag bits.
local K = {}
K.dcp = {tag_none = 0, tag_ack = 1, tag_data = 2, tag_ho = 3, tag_mask = 3, ho_msn_len = 3}
K.sdr = {magic = 0x53, version = 1, ctrl_header_len = 8, default_mtu = 4096, body_fixed = {cts = 8, sr_ack = 8, sr_nack = 4, ec_ack = 0, ec_nack = 4}}
K.flor = {version = 1, send_header_len = 24, addr_len = {addr_req = 16, addr_resp = 24}, flag_hint = 0x80, flags_reserved = 0x3f, ack_header_len = 24, ack_max_entries = 32, ack_qpn_high = 0xff000000}
K.netrt = {type_request = 1, type_unfulfilled = 2, request_len = 20, unfulfilled_len = 4, rtx_mark = 0x01}
K.erd = {eeth_len = 12, type_bit = 0x80, last_bit = 0x40, mgmt_qp_max = 1, nack_magic = 0x4e, nack_version = 1, nack_header_len = 4, nack_entry_len = 12, nack_max_streams = 1024}
K.cm = {qp = 1, mgmt_class_cm = 0x07, header_len = 24, min_len = 72, need = {req = 71, mra = 36, rej = 36, rep = 47, rtu = 36, dreq = 36, drep = 36}}
-- K.mac_control.ops[opcode] = {need = bytes after the EtherType, class_enable = PFC's vector,
-- quanta = offsets of the pause times}.
K.mac_control = {ops = {[0x0001] = {need = 4, class_enable = nil, quanta = {2}}, [0x0101] = {need = 20, class_enable = {off = 2, len = 2}, quanta = {4, 6, 8, 10, 12, 14, 16, 18}}}, opcode_len = 2, quanta_len = 2}
-- L.<header>.<field> = {off = byte offset in the header, len = bytes (0: to the end)}; a repeated
-- field (ACK entries, NACK indices) is its first occurrence.
local L = {}
L.flor_send = {version = {off = 0, len = 1}, type = {off = 1, len = 1}, flags = {off = 2, len = 1}, reserved = {off = 3, len = 1}, rn = {off = 4, len = 4}, gn = {off = 8, len = 8}, write_rn = {off = 16, len = 4}, body_len = {off = 20, len = 4}}
L.flor_addr_req = {mid = {off = 0, len = 4}, msg_len = {off = 8, len = 8}}
L.flor_addr_resp = {mid = {off = 0, len = 4}, r_key = {off = 4, len = 4}, va = {off = 8, len = 8}, buf_len = {off = 16, len = 8}}
L.flor_ack = {qpn = {off = 0, len = 4}, bitmap = {off = 4, len = 4}, least_gn = {off = 8, len = 8}, delay_ns = {off = 16, len = 8}, entry = {off = 24, len = 4}}
L.sdr_ctrl = {magic = {off = 0, len = 1}, version = {off = 1, len = 1}, type = {off = 2, len = 1}, flags = {off = 3, len = 1}, msg_seq = {off = 4, len = 4}, buf_len = {off = 8, len = 8}, cum_ack = {off = 8, len = 4}, sack_bits = {off = 12, len = 4}, sack = {off = 16, len = 0}, count = {off = 8, len = 4}, index = {off = 12, len = 4}}
L.netrt = {type = {off = 0, len = 1}, psn = {off = 1, len = 3}, bitmap = {off = 4, len = 16}}
L.erd_eeth = {flags = {off = 0, len = 1}, msg_id = {off = 2, len = 2}, s_len = {off = 4, len = 2}, s_offset = {off = 8, len = 4}}
L.erd_nack = {magic = {off = 0, len = 1}, version = {off = 1, len = 1}, count = {off = 2, len = 2}, src_qpn = {off = 1, len = 3}, dst_qpn = {off = 5, len = 3}, psn = {off = 9, len = 3}}
L.cm = {mgmt_class = {off = 1, len = 1}, local_comm_id = {off = 24, len = 4}, remote_comm_id = {off = 28, len = 4}, attr_id = {off = 16, len = 2}, msgs = {req = {local_qpn = {off = 56, len = 3}, remote_qpn = nil, start_psn = {off = 68, len = 3}, remote_comm_id = false}, mra = {local_qpn = nil, remote_qpn = nil, start_psn = nil, remote_comm_id = true}, rej = {local_qpn = nil, remote_qpn = nil, start_psn = nil, remote_comm_id = true}, rep = {local_qpn = {off = 36, len = 3}, remote_qpn = nil, start_psn = {off = 44, len = 3}, remote_comm_id = true}, rtu = {local_qpn = nil, remote_qpn = nil, start_psn = nil, remote_comm_id = true}, dreq = {local_qpn = nil, remote_qpn = {off = 32, len = 3}, start_psn = nil, remote_comm_id = true}, drep = {local_qpn = nil, remote_qpn = nil, start_psn = nil, remote_comm_id = true}}}

-- ==== generated: the AETH syndrome (codec/src/ib/aeth.rs Syndrome::from_byte) and IBTA lengths ====
-- AETH_SYNDROME[byte] = {kind, field = registry name of its low bits (nil: none), value}
local AETH_SYNDROME = {
    [0] = {kind = "ack", field = "rocescope.aeth.credit", value = 0},
    [1] = {kind = "ack", field = "rocescope.aeth.credit", value = 1},
    [2] = {kind = "ack", field = "rocescope.aeth.credit", value = 2},
    [3] = {kind = "ack", field = "rocescope.aeth.credit", value = 3},
    [4] = {kind = "ack", field = "rocescope.aeth.credit", value = 4},
    [5] = {kind = "ack", field = "rocescope.aeth.credit", value = 5},
    [6] = {kind = "ack", field = "rocescope.aeth.credit", value = 6},
    [7] = {kind = "ack", field = "rocescope.aeth.credit", value = 7},
    [8] = {kind = "ack", field = "rocescope.aeth.credit", value = 8},
    [9] = {kind = "ack", field = "rocescope.aeth.credit", value = 9},
    [10] = {kind = "ack", field = "rocescope.aeth.credit", value = 10},
    [11] = {kind = "ack", field = "rocescope.aeth.credit", value = 11},
    [12] = {kind = "ack", field = "rocescope.aeth.credit", value = 12},
    [13] = {kind = "ack", field = "rocescope.aeth.credit", value = 13},
    [14] = {kind = "ack", field = "rocescope.aeth.credit", value = 14},
    [15] = {kind = "ack", field = "rocescope.aeth.credit", value = 15},
    [16] = {kind = "ack", field = "rocescope.aeth.credit", value = 16},
    [17] = {kind = "ack", field = "rocescope.aeth.credit", value = 17},
    [18] = {kind = "ack", field = "rocescope.aeth.credit", value = 18},
    [19] = {kind = "ack", field = "rocescope.aeth.credit", value = 19},
    [20] = {kind = "ack", field = "rocescope.aeth.credit", value = 20},
    [21] = {kind = "ack", field = "rocescope.aeth.credit", value = 21},
    [22] = {kind = "ack", field = "rocescope.aeth.credit", value = 22},
    [23] = {kind = "ack", field = "rocescope.aeth.credit", value = 23},
    [24] = {kind = "ack", field = "rocescope.aeth.credit", value = 24},
    [25] = {kind = "ack", field = "rocescope.aeth.credit", value = 25},
    [26] = {kind = "ack", field = "rocescope.aeth.credit", value = 26},
    [27] = {kind = "ack", field = "rocescope.aeth.credit", value = 27},
    [28] = {kind = "ack", field = "rocescope.aeth.credit", value = 28},
    [29] = {kind = "ack", field = "rocescope.aeth.credit", value = 29},
    [30] = {kind = "ack", field = "rocescope.aeth.credit", value = 30},
    [31] = {kind = "ack", field = "rocescope.aeth.credit", value = 31},
    [32] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 0},
    [33] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 1},
    [34] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 2},
    [35] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 3},
    [36] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 4},
    [37] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 5},
    [38] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 6},
    [39] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 7},
    [40] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 8},
    [41] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 9},
    [42] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 10},
    [43] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 11},
    [44] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 12},
    [45] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 13},
    [46] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 14},
    [47] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 15},
    [48] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 16},
    [49] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 17},
    [50] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 18},
    [51] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 19},
    [52] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 20},
    [53] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 21},
    [54] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 22},
    [55] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 23},
    [56] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 24},
    [57] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 25},
    [58] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 26},
    [59] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 27},
    [60] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 28},
    [61] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 29},
    [62] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 30},
    [63] = {kind = "rnr_nak", field = "rocescope.aeth.rnr_timer", value = 31},
    [64] = {kind = "reserved"},
    [65] = {kind = "reserved"},
    [66] = {kind = "reserved"},
    [67] = {kind = "reserved"},
    [68] = {kind = "reserved"},
    [69] = {kind = "reserved"},
    [70] = {kind = "reserved"},
    [71] = {kind = "reserved"},
    [72] = {kind = "reserved"},
    [73] = {kind = "reserved"},
    [74] = {kind = "reserved"},
    [75] = {kind = "reserved"},
    [76] = {kind = "reserved"},
    [77] = {kind = "reserved"},
    [78] = {kind = "reserved"},
    [79] = {kind = "reserved"},
    [80] = {kind = "reserved"},
    [81] = {kind = "reserved"},
    [82] = {kind = "reserved"},
    [83] = {kind = "reserved"},
    [84] = {kind = "reserved"},
    [85] = {kind = "reserved"},
    [86] = {kind = "reserved"},
    [87] = {kind = "reserved"},
    [88] = {kind = "reserved"},
    [89] = {kind = "reserved"},
    [90] = {kind = "reserved"},
    [91] = {kind = "reserved"},
    [92] = {kind = "reserved"},
    [93] = {kind = "reserved"},
    [94] = {kind = "reserved"},
    [95] = {kind = "reserved"},
    [96] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 0, psn_seq_error = true},
    [97] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 1},
    [98] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 2},
    [99] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 3},
    [100] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 4},
    [101] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 5},
    [102] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 6},
    [103] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 7},
    [104] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 8},
    [105] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 9},
    [106] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 10},
    [107] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 11},
    [108] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 12},
    [109] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 13},
    [110] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 14},
    [111] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 15},
    [112] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 16},
    [113] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 17},
    [114] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 18},
    [115] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 19},
    [116] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 20},
    [117] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 21},
    [118] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 22},
    [119] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 23},
    [120] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 24},
    [121] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 25},
    [122] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 26},
    [123] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 27},
    [124] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 28},
    [125] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 29},
    [126] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 30},
    [127] = {kind = "nak", field = "rocescope.aeth.nak_code", value = 31},
    [128] = {kind = "reserved"},
    [129] = {kind = "reserved"},
    [130] = {kind = "reserved"},
    [131] = {kind = "reserved"},
    [132] = {kind = "reserved"},
    [133] = {kind = "reserved"},
    [134] = {kind = "reserved"},
    [135] = {kind = "reserved"},
    [136] = {kind = "reserved"},
    [137] = {kind = "reserved"},
    [138] = {kind = "reserved"},
    [139] = {kind = "reserved"},
    [140] = {kind = "reserved"},
    [141] = {kind = "reserved"},
    [142] = {kind = "reserved"},
    [143] = {kind = "reserved"},
    [144] = {kind = "reserved"},
    [145] = {kind = "reserved"},
    [146] = {kind = "reserved"},
    [147] = {kind = "reserved"},
    [148] = {kind = "reserved"},
    [149] = {kind = "reserved"},
    [150] = {kind = "reserved"},
    [151] = {kind = "reserved"},
    [152] = {kind = "reserved"},
    [153] = {kind = "reserved"},
    [154] = {kind = "reserved"},
    [155] = {kind = "reserved"},
    [156] = {kind = "reserved"},
    [157] = {kind = "reserved"},
    [158] = {kind = "reserved"},
    [159] = {kind = "reserved"},
    [160] = {kind = "reserved"},
    [161] = {kind = "reserved"},
    [162] = {kind = "reserved"},
    [163] = {kind = "reserved"},
    [164] = {kind = "reserved"},
    [165] = {kind = "reserved"},
    [166] = {kind = "reserved"},
    [167] = {kind = "reserved"},
    [168] = {kind = "reserved"},
    [169] = {kind = "reserved"},
    [170] = {kind = "reserved"},
    [171] = {kind = "reserved"},
    [172] = {kind = "reserved"},
    [173] = {kind = "reserved"},
    [174] = {kind = "reserved"},
    [175] = {kind = "reserved"},
    [176] = {kind = "reserved"},
    [177] = {kind = "reserved"},
    [178] = {kind = "reserved"},
    [179] = {kind = "reserved"},
    [180] = {kind = "reserved"},
    [181] = {kind = "reserved"},
    [182] = {kind = "reserved"},
    [183] = {kind = "reserved"},
    [184] = {kind = "reserved"},
    [185] = {kind = "reserved"},
    [186] = {kind = "reserved"},
    [187] = {kind = "reserved"},
    [188] = {kind = "reserved"},
    [189] = {kind = "reserved"},
    [190] = {kind = "reserved"},
    [191] = {kind = "reserved"},
    [192] = {kind = "reserved"},
    [193] = {kind = "reserved"},
    [194] = {kind = "reserved"},
    [195] = {kind = "reserved"},
    [196] = {kind = "reserved"},
    [197] = {kind = "reserved"},
    [198] = {kind = "reserved"},
    [199] = {kind = "reserved"},
    [200] = {kind = "reserved"},
    [201] = {kind = "reserved"},
    [202] = {kind = "reserved"},
    [203] = {kind = "reserved"},
    [204] = {kind = "reserved"},
    [205] = {kind = "reserved"},
    [206] = {kind = "reserved"},
    [207] = {kind = "reserved"},
    [208] = {kind = "reserved"},
    [209] = {kind = "reserved"},
    [210] = {kind = "reserved"},
    [211] = {kind = "reserved"},
    [212] = {kind = "reserved"},
    [213] = {kind = "reserved"},
    [214] = {kind = "reserved"},
    [215] = {kind = "reserved"},
    [216] = {kind = "reserved"},
    [217] = {kind = "reserved"},
    [218] = {kind = "reserved"},
    [219] = {kind = "reserved"},
    [220] = {kind = "reserved"},
    [221] = {kind = "reserved"},
    [222] = {kind = "reserved"},
    [223] = {kind = "reserved"},
    [224] = {kind = "reserved"},
    [225] = {kind = "reserved"},
    [226] = {kind = "reserved"},
    [227] = {kind = "reserved"},
    [228] = {kind = "reserved"},
    [229] = {kind = "reserved"},
    [230] = {kind = "reserved"},
    [231] = {kind = "reserved"},
    [232] = {kind = "reserved"},
    [233] = {kind = "reserved"},
    [234] = {kind = "reserved"},
    [235] = {kind = "reserved"},
    [236] = {kind = "reserved"},
    [237] = {kind = "reserved"},
    [238] = {kind = "reserved"},
    [239] = {kind = "reserved"},
    [240] = {kind = "reserved"},
    [241] = {kind = "reserved"},
    [242] = {kind = "reserved"},
    [243] = {kind = "reserved"},
    [244] = {kind = "reserved"},
    [245] = {kind = "reserved"},
    [246] = {kind = "reserved"},
    [247] = {kind = "reserved"},
    [248] = {kind = "reserved"},
    [249] = {kind = "reserved"},
    [250] = {kind = "reserved"},
    [251] = {kind = "reserved"},
    [252] = {kind = "reserved"},
    [253] = {kind = "reserved"},
    [254] = {kind = "reserved"},
    [255] = {kind = "reserved"},
}
K.ib = {icrc_len = 4, cnp_reserved = 16, ho_msn_len = 3, atomic_write_len = 8, vcrc_len = 2, lnh_local = 2, lnh_global = 3, pkt_len_unit = 4}

-- ==== generated: the packet comments of `rocescope annotate` (pcap-tools/analysis/src/annotation.rs,
-- the analysis fields' table pcap-tools/analysis/src/analyze/fields.rs; docs/annotate.md) ====
-- (One table, ANNOT: Lua allows 200 locals in a chunk, and the plugin is near that.)
-- ANNOT.F[name]        the field's ProtoField
-- ANNOT.kind[name]     "uint" | "uint64" | "bool" | "enum" | "text"
-- ANNOT.group[name]    "analysis" | "replay" (its subtree)
-- ANNOT.repeated[name] true when it may occur several times in one comment
-- ANNOT.values[name]   set of the names an enumerated field takes
-- ANNOT.expert[name]   {group, severity, text}, raised when its value is not 0
local ANNOT = {F = {}, kind = {}, group = {}, repeated = {}, values = {}, expert = {},
    marker = "rocescope 1", comment_fields = {"frame.comment", "pkt_comment"}, unescape = {["\\"] = "\\", n = "\n", r = "\r"}}
function ANNOT.field(name, kind, group, repeated, pf)
    ANNOT.F[name] = pf
    ANNOT.kind[name] = kind
    ANNOT.group[name] = group
    ANNOT.repeated[name] = repeated
    FIELD_LIST[#FIELD_LIST + 1] = pf
end
ANNOT.tree = {
    analysis = ProtoField.new("RoCE analysis (rocescope annotate)", "rocescope.analysis", ftypes.NONE, nil, base.NONE, nil, "RoCE analysis (rocescope annotate)"),
    replay = ProtoField.new("RoCE replay verdicts (rocescope annotate)", "rocescope.replay", ftypes.NONE, nil, base.NONE, nil, "RoCE replay verdicts (rocescope annotate)"),
}
FIELD_LIST[#FIELD_LIST + 1] = ANNOT.tree.analysis
FIELD_LIST[#FIELD_LIST + 1] = ANNOT.tree.replay
ANNOT.field("rocescope.analysis.flow", "text", "analysis", false, ProtoField.new("Analysis: the frame's flow (SRC>DST/DESTQP[@IF][#N], as `flows` and `timeline` name it)", "rocescope.analysis.flow", ftypes.STRING, nil, base.NONE, nil, "Analysis: the frame's flow (SRC>DST/DESTQP[@IF][#N], as `flows` and `timeline` name it)"))
ANNOT.field("rocescope.analysis.retransmission", "bool", "analysis", false, ProtoField.new("Analysis: a transmission of a PSN the tap saw before (set on retransmissions only)", "rocescope.analysis.retransmission", ftypes.UINT8, BOOL_STRINGS, base.DEC, nil, "Analysis: a transmission of a PSN the tap saw before (set on retransmissions only)"))
ANNOT.field("rocescope.analysis.retransmission.cause", "enum", "analysis", false, ProtoField.new("Analysis: why it was sent again, as far as this tap can tell", "rocescope.analysis.retransmission.cause", ftypes.STRING, nil, base.NONE, nil, "Analysis: why it was sent again, as far as this tap can tell"))
ANNOT.values["rocescope.analysis.retransmission.cause"] = {["loss"] = true, ["go_back"] = true, ["timeout"] = true, ["spurious"] = true, ["unknown"] = true}
ANNOT.field("rocescope.analysis.retransmission.trigger", "enum", "analysis", false, ProtoField.new("Analysis: what made the sender resend it (known at the sender's tap)", "rocescope.analysis.retransmission.trigger", ftypes.STRING, nil, base.NONE, nil, "Analysis: what made the sender resend it (known at the sender's tap)"))
ANNOT.values["rocescope.analysis.retransmission.trigger"] = {["gap"] = true, ["nak"] = true, ["sack"] = true, ["ho"] = true, ["timeout"] = true, ["sdr_bitmap"] = true, ["flor_ack"] = true, ["netrt_request"] = true, ["erd_nack"] = true, ["unknown"] = true}
ANNOT.field("rocescope.analysis.spurious", "bool", "analysis", false, ProtoField.new("Analysis: the receiver already had this PSN (absent when the tap cannot tell)", "rocescope.analysis.spurious", ftypes.UINT8, BOOL_STRINGS, base.DEC, nil, "Analysis: the receiver already had this PSN (absent when the tap cannot tell)"))
ANNOT.field("rocescope.analysis.loss", "bool", "analysis", false, ProtoField.new("Analysis: the timeline's loss entry names this frame (the lost transmission, or its repair when the tap never saw it)", "rocescope.analysis.loss", ftypes.UINT8, BOOL_STRINGS, base.DEC, nil, "Analysis: the timeline's loss entry names this frame (the lost transmission, or its repair when the tap never saw it)"))
ANNOT.field("rocescope.analysis.loss.signal", "enum", "analysis", false, ProtoField.new("Analysis: how the loss was signalled to the sender", "rocescope.analysis.loss.signal", ftypes.STRING, nil, base.NONE, nil, "Analysis: how the loss was signalled to the sender"))
ANNOT.values["rocescope.analysis.loss.signal"] = {["gap"] = true, ["nak"] = true, ["sack"] = true, ["ho"] = true, ["timeout"] = true, ["sdr_bitmap"] = true, ["flor_ack"] = true, ["netrt_request"] = true, ["erd_nack"] = true, ["unknown"] = true}
ANNOT.field("rocescope.analysis.out_of_order", "bool", "analysis", false, ProtoField.new("Analysis: the first copy of a PSN below one the tap saw earlier", "rocescope.analysis.out_of_order", ftypes.UINT8, BOOL_STRINGS, base.DEC, nil, "Analysis: the first copy of a PSN below one the tap saw earlier"))
ANNOT.field("rocescope.analysis.psn_gap", "bool", "analysis", false, ProtoField.new("Analysis: PSNs between the highest seen and this one were not seen (not captured, or lost)", "rocescope.analysis.psn_gap", ftypes.UINT8, BOOL_STRINGS, base.DEC, nil, "Analysis: PSNs between the highest seen and this one were not seen (not captured, or lost)"))
ANNOT.field("rocescope.analysis.acked_unseen", "uint", "analysis", false, ProtoField.new("Analysis: how many PSNs this acknowledgement covers that the capture never saw (capture gaps)", "rocescope.analysis.acked_unseen", ftypes.UINT32, nil, base.DEC, nil, "Analysis: how many PSNs this acknowledgement covers that the capture never saw (capture gaps)"))
ANNOT.field("rocescope.analysis.duplicate_nak", "bool", "analysis", false, ProtoField.new("Analysis: a NAK with the same PSN as the flow's previous NAK", "rocescope.analysis.duplicate_nak", ftypes.UINT8, BOOL_STRINGS, base.DEC, nil, "Analysis: a NAK with the same PSN as the flow's previous NAK"))
ANNOT.field("rocescope.analysis.ack_rtt_ns", "uint64", "analysis", false, ProtoField.new("Analysis: time from the data packet this acknowledgement newly covers to it (not for a retransmitted PSN: Karn)", "rocescope.analysis.ack_rtt_ns", ftypes.UINT64, nil, base.DEC, nil, "Analysis: time from the data packet this acknowledgement newly covers to it (not for a retransmitted PSN: Karn)"))
ANNOT.field("rocescope.analysis.message", "uint", "analysis", false, ProtoField.new("Analysis: index of the message this data packet belongs to, from 0 per flow", "rocescope.analysis.message", ftypes.UINT32, nil, base.DEC, nil, "Analysis: index of the message this data packet belongs to, from 0 per flow"))
ANNOT.field("rocescope.analysis.message_complete", "uint", "analysis", true, ProtoField.new("Analysis: the messages this frame proves complete (repeated)", "rocescope.analysis.message_complete", ftypes.UINT32, nil, base.DEC, nil, "Analysis: the messages this frame proves complete (repeated)"))
ANNOT.field("rocescope.analysis.ce_to_cnp_ns", "uint64", "analysis", false, ProtoField.new("Analysis: time from the last CE-marked data packet of the flow this CNP reports to the CNP", "rocescope.analysis.ce_to_cnp_ns", ftypes.UINT64, nil, base.DEC, nil, "Analysis: time from the last CE-marked data packet of the flow this CNP reports to the CNP"))
ANNOT.field("rocescope.replay.departure", "bool", "replay", false, ProtoField.new("Replay: a departure from the reference stack names this frame (docs/replay.md)", "rocescope.replay.departure", ftypes.UINT8, BOOL_STRINGS, base.DEC, nil, "Replay: a departure from the reference stack names this frame (docs/replay.md)"))
ANNOT.field("rocescope.replay.ambiguous", "bool", "replay", false, ProtoField.new("Replay: an ambiguous finding (a departure, or a capture gap or loss) names this frame", "rocescope.replay.ambiguous", ftypes.UINT8, BOOL_STRINGS, base.DEC, nil, "Replay: an ambiguous finding (a departure, or a capture gap or loss) names this frame"))
ANNOT.field("rocescope.replay.kind", "enum", "replay", true, ProtoField.new("Replay: each finding naming this frame: departure or ambiguous (repeated, one per finding)", "rocescope.replay.kind", ftypes.STRING, nil, base.NONE, nil, "Replay: each finding naming this frame: departure or ambiguous (repeated, one per finding)"))
ANNOT.values["rocescope.replay.kind"] = {["departure"] = true, ["ambiguous"] = true}
ANNOT.field("rocescope.replay.rule", "text", "replay", true, ProtoField.new("Replay: each finding's rule (repeated)", "rocescope.replay.rule", ftypes.STRING, nil, base.NONE, nil, "Replay: each finding's rule (repeated)"))
ANNOT.field("rocescope.replay.source", "text", "replay", true, ProtoField.new("Replay: where each finding's rule is written (repeated)", "rocescope.replay.source", ftypes.STRING, nil, base.NONE, nil, "Replay: where each finding's rule is written (repeated)"))
ANNOT.field("rocescope.replay.stack", "text", "replay", true, ProtoField.new("Replay: the reference stack that judged each finding's connection (repeated)", "rocescope.replay.stack", ftypes.STRING, nil, base.NONE, nil, "Replay: the reference stack that judged each finding's connection (repeated)"))
ANNOT.field("rocescope.replay.flow", "text", "replay", true, ProtoField.new("Replay: each finding's flow, the connection's requests flow (repeated)", "rocescope.replay.flow", ftypes.STRING, nil, base.NONE, nil, "Replay: each finding's flow, the connection's requests flow (repeated)"))
ANNOT.field("rocescope.replay.cause", "uint", "replay", true, ProtoField.new("Replay: each finding's first frame, its cause (repeated)", "rocescope.replay.cause", ftypes.UINT32, nil, base.DEC, nil, "Replay: each finding's first frame, its cause (repeated)"))
ANNOT.field("rocescope.replay.expected", "text", "replay", true, ProtoField.new("Replay: what the reference stack does, per finding (repeated)", "rocescope.replay.expected", ftypes.STRING, nil, base.NONE, nil, "Replay: what the reference stack does, per finding (repeated)"))
ANNOT.field("rocescope.replay.seen", "text", "replay", true, ProtoField.new("Replay: what the capture shows, per finding (repeated)", "rocescope.replay.seen", ftypes.STRING, nil, base.NONE, nil, "Replay: what the capture shows, per finding (repeated)"))
ANNOT.expert["rocescope.analysis.retransmission"] = {PI_SEQUENCE, PI_WARN, "Retransmission (rocescope analysis)"}
ANNOT.expert["rocescope.analysis.spurious"] = {PI_SEQUENCE, PI_NOTE, "Spurious retransmission: the receiver already had this PSN (rocescope analysis)"}
ANNOT.expert["rocescope.analysis.loss"] = {PI_SEQUENCE, PI_WARN, "Loss: this transmission, or the one it repairs, was lost (rocescope analysis)"}
ANNOT.expert["rocescope.analysis.out_of_order"] = {PI_SEQUENCE, PI_WARN, "Out of order: below a PSN seen earlier (rocescope analysis)"}
ANNOT.expert["rocescope.analysis.psn_gap"] = {PI_SEQUENCE, PI_WARN, "PSN gap: PSNs before this one were not seen (rocescope analysis)"}
ANNOT.expert["rocescope.analysis.acked_unseen"] = {PI_SEQUENCE, PI_NOTE, "Acknowledges PSNs the capture never saw (rocescope analysis)"}
ANNOT.expert["rocescope.analysis.duplicate_nak"] = {PI_SEQUENCE, PI_NOTE, "Duplicate NAK (rocescope analysis)"}
ANNOT.finding = {kind = "rocescope.replay.kind", rule = "rocescope.replay.rule", expected = "rocescope.replay.expected", seen = "rocescope.replay.seen"}
ANNOT.finding_expert = {
    ["departure"] = {PI_PROTOCOL, PI_ERROR, "Departure from the reference stack (rocescope replay), rule %s: expected %s; seen %s"},
    ["ambiguous"] = {PI_PROTOCOL, PI_NOTE, "Departure or capture gap (rocescope replay), rule %s: expected %s; seen %s"},
}

-- ==== end of the generated part; what follows is dissector/template.lua ====

-- dissector/template.lua: the hand-written part of dissector/rocescope.lua.
--
-- `rocescope dissector` (dissector/src/lib.rs) prepends the generated tables this file uses:
--   F, FIELD_LIST, FIELD_KIND, FIELD_PROFILE, REPEATED, ENUM_VALUES  the field registry
--   PROFILE_CHOICES, PARAM_DEFS, PARAM_FALLBACK, declare_param_prefs profiles, parameters
--   HDR, OPCODES                                     header layouts (every field's bytes), opcode tables
--   CM_MSGS                                                          CM attribute ids
--   LAYER, W, X                                                      warning texts
--   NOTE, SDR_CTRL, FLOR_SEND, LIMITS                                extension texts, limits
--   OPS, K, L                                                        opcode sets, constants, layouts
-- so this file never spells a field's type or description, where a header field lies, an
-- opcode's headers, a default, a warning text, an opcode number, an extension's offset or magic
-- number or a memory limit (dissector/tests/lua_handwritten.rs checks it, with an allow-list for
-- the L2-L4 walk).
-- Edit this file, then regenerate: cargo run -p rocescope -- dissector > dissector/rocescope.lua
--
-- HOW IT HOOKS INTO WIRESHARK
-- Wireshark's built-in `infiniband` dissector stays in charge of UDP port 4791 and EtherType
-- 0x8915: its tree, its fields (infiniband.*), columns and heuristic payload dissectors are what
-- they are without this plugin. The protocol `rocescope` is a post-dissector: it sees every frame
-- after Wireshark's own dissectors, with the whole frame's bytes, and adds its own subtree
-- (rocescope.*) beside infiniband's to the frames that are its to show: RoCE packets, PAUSE /
-- PFC frames, TCP segments of ERD's NACK port (`claims`). For every other frame it only reads
-- pinfo.port_type and the ports Wireshark's dissectors left (`candidate`) and returns: infiniband
-- marks every RoCE packet it decodes with its queue-pair port type. A post-dissector, not a
-- dissector on UDP 4791 calling infiniband: a Lua dissector that calls another one cannot catch
-- the exception Wireshark throws on a frame cut by the snaplen (BoundsError, which unwinds
-- through the Lua call and corrupts the Lua state after a few hundred such frames), and it
-- cannot reach the IP header below the UDP payload it is given without a field extractor, which
-- makes Wireshark build every frame's tree (both measured: dissector/README.md, "Benchmark").
-- Disabled (--disable-protocol rocescope), it is not called at all.
-- rocescope decodes the whole frame from the link header on exactly as the codec's
-- `Frame::parse` does (codec/src/frame.rs): Ethernet / Linux cooked v1 / v2 / raw IP (told apart
-- by what the link dissectors left in pinfo: `link_of`), up to two VLAN tags, IPv4 / IPv6, UDP
-- port 4791 on either side, the GRH, MAC control, TCP; or native InfiniBand from the LRH (link type
-- 247, or ERF records of type 21: LRH, GRH or not, the transport, ICRC, VCRC; docs/link-types.md).
-- When tshark neither shows the tree nor names a rocescope field (in a filter, a column, -e), the
-- frame is not decoded at all (`wanted`): nothing could read it.
-- `rocescope.verify_checksums` (default off, as Wireshark's own checksum validation): the ICRC
-- and the IPv4 header checksum are computed (in Lua: costly) only when it is on; off, the frame
-- reads as the codec's decoder with verification off reads it (no rocescope.icrc.status, no
-- checksum warnings), except that `auto` detection verifies what it compares, as
-- `Decoder::checksums_for_detection_only` does.

-- PROFILES
-- The preference `rocescope.profile` takes auto std dcp sdr flor netrt erd, as `rocescope decode
-- --profile`. Each extension plugs in through EXTENSIONS (the layout of the bytes after the BTH,
-- a parse and a visit function), mirroring codec/src/ext/*.rs. What only a sequence of packets
-- reveals is kept in STATE, as codec/src/decoder/ keeps it: `auto` detection per flow, the SDR
-- user immediate and VA check (SdrTracker), the ERD NACK TCP stream (NackReassembler). It is
-- updated once per frame, the first time the frame comes up in order (Wireshark's first pass,
-- pinfo.visited false), which keeps what it found per frame number; later dissections of the
-- frame (pinfo.visited set) read that. proto.init forgets everything when a file is (re)loaded or
-- a preference changes (see decode_frame).
-- The parameter preferences of INTERFACES.md (rocescope.dcp_tag_shift, .sdr_split, ...) are the
-- entries of the codec's parameter table (codec/src/params/table.rs), named with underscores
-- where the command line has hyphens (Wireshark allows only [a-z0-9_.] in preference names):
-- the generated declare_param_prefs declares them, read_params reads them through PARAM_DEFS.

-- Bit operations: bit32 in Lua 5.2 (Wireshark up to 4.2); native operators from Lua 5.3 on,
-- compiled from a string so that Lua 5.2 never parses them.
local bitops = bit32 or load([[return {
    band = function(a, b) return a & b end,
    bor = function(a, b) return a | b end,
    bxor = function(a, b) return a ~ b end,
    rshift = function(a, n) return (a & 0xffffffff) >> n end,
}]])()
local band, bor, bxor, rshift = bitops.band, bitops.bor, bitops.bxor, bitops.rshift
local sfmt = string.format
local floor = math.floor
local min, max = math.min, math.max -- locals: no global lookup on the per-packet paths
local ipairs, pairs, type = ipairs, pairs, type
local U32 = 4294967296 -- 2^32

-- ---- unsigned integers beyond 2^53 (RETH VAs, global sequence numbers, u128 products) ----
-- A "big" is an array of 16-bit limbs, least significant first, without leading zero limbs
-- ({} is 0). Lua 5.2 numbers are doubles, exact only up to 2^53.

local LIMB = 65536
local function big_norm(a)
    local n = #a
    while n > 0 and a[n] == 0 do
        a[n] = nil
        n = n - 1
    end
    return a
end
local function big(n) -- n: an integer below 2^53
    local a = {}
    while n > 0 do
        a[#a + 1] = n % LIMB
        n = floor(n / LIMB)
    end
    return a
end
local function big_mul_add(a, m, c) -- a * m + c, m and c below 2^16 (a new big)
    local r, carry = {}, c
    for i = 1, #a do
        local v = a[i] * m + carry
        r[i] = v % LIMB
        carry = floor(v / LIMB)
    end
    while carry > 0 do
        r[#r + 1] = carry % LIMB
        carry = floor(carry / LIMB)
    end
    return big_norm(r)
end
local function big_add(a, b)
    local r, carry = {}, 0
    for i = 1, max(#a, #b) do
        local v = (a[i] or 0) + (b[i] or 0) + carry
        r[i] = v % LIMB
        carry = floor(v / LIMB)
    end
    if carry > 0 then r[#r + 1] = carry end
    return big_norm(r)
end
local function big_mul(a, b)
    local r = {}
    for i = 1, #a + #b do r[i] = 0 end
    for i = 1, #a do
        local carry = 0
        for j = 1, #b do
            local v = r[i + j - 1] + a[i] * b[j] + carry
            r[i + j - 1] = v % LIMB
            carry = floor(v / LIMB)
        end
        local k = i + #b
        while carry > 0 do
            local v = r[k] + carry
            r[k] = v % LIMB
            carry = floor(v / LIMB)
            k = k + 1
        end
    end
    return big_norm(r)
end
local function big_pow2(k)
    local a = {}
    for i = 1, floor(k / 16) do a[i] = 0 end
    a[floor(k / 16) + 1] = 2 ^ (k % 16)
    return a
end
local function big_eq(a, b)
    if #a ~= #b then return false end
    for i = 1, #a do
        if a[i] ~= b[i] then return false end
    end
    return true
end
local function big_low64(a) -- a mod 2^64
    local r = {}
    for i = 1, min(#a, 4) do r[i] = a[i] end
    return big_norm(r)
end
-- `len` big-endian bytes of the string `s` at offset `o` (from 0).
local function big_bytes(s, o, len)
    local a = {}
    for i = 1, len do a = big_mul_add(a, 256, s:byte(o + i)) end
    return a
end
-- A decimal or 0x-hexadecimal string (nil if neither).
local function big_parse(s)
    local base, digits = 10, s
    local h = string.match(s, "^0[xX](%x+)$")
    if h then
        base, digits = 16, h
    elseif not string.match(s, "^%d+$") then
        return nil
    end
    local a = {}
    for i = 1, #digits do a = big_mul_add(a, base, tonumber(digits:sub(i, i), 16)) end
    return a
end
-- The (low, high) 32-bit halves of a big below 2^64.
local function big_halves(a)
    return (a[1] or 0) + (a[2] or 0) * LIMB, (a[3] or 0) + (a[4] or 0) * LIMB
end

local proto = Proto("rocescope", "RoCE (rocescope)")
proto.fields = FIELD_LIST

-- ---- preferences ----

-- The preferences (generated: the profile, the checksum switch, and one per
-- entry of the codec's parameter table, with its titles, defaults and help texts).
declare_param_prefs(proto)
-- rocescope.verify_checksums (read again by prefs_changed).
local VERIFY = proto.prefs.verify_checksums

-- A number as params::parse_uint reads it: decimal, or 0x hexadecimal (as a big; nil if neither).
local function parse_uint(s)
    local h = string.match(s, "^0[xX]%+?(%x+)$")
    if h then return big_parse("0x" .. h) end
    local d = string.match(s, "^%+?(%d+)$")
    if d then return big_parse(d) end
    return nil
end

-- a <= b for bigs.
local function big_le(a, b)
    if #a ~= #b then return #a < #b end
    for i = #a, 1, -1 do
        if a[i] ~= b[i] then return a[i] < b[i] end
    end
    return true
end

-- "8,22,2" -> {8, 22, 2} when the three widths add up to 32 (ImmSplit::parse).
local function parse_split(s)
    local a, b, c = string.match(s, "^%s*%+?(%d+)%s*,%s*%+?(%d+)%s*,%s*%+?(%d+)%s*$")
    a, b, c = tonumber(a), tonumber(b), tonumber(c)
    if a and a + b + c == 32 then return {a, b, c} end
    return nil
end

-- A preference's text read as ParamDef::parse reads it, by the parameter's PARAM_DEFS entry:
-- ok (false: malformed or out of range) and the value: a number of up to 32 bits as a Lua number,
-- of 64 bits as a big, nil for a blank optional number (derived); a split as {a, b, c}.
local function parse_param(def, text)
    local s = string.match(text or "", "^%s*(.-)%s*$")
    if def.kind == "split" then
        local v = parse_split(s)
        return v ~= nil, v
    end
    if def.optional and s == "" then return true, nil end
    local v = parse_uint(s)
    if v == nil or not big_le(v, big_parse(def.max)) then return false, nil end
    if def.bits > 32 then return true, v end
    return true, (big_halves(v))
end

-- The transports' parameters (codec/src/params.rs Params), from the preferences, each read by
-- its PARAM_DEFS entry (kind, range, default). A malformed or out-of-range value is reported
-- once and the parameter's default used.
local function read_params()
    local p, bad = {}, {}
    for _, def in ipairs(PARAM_DEFS) do
        local pref = proto.prefs[def.name]
        if def.kind == "enum" then
            -- Pref.enum: the index of the name in def.values.
            p[def.name] = def.values[pref] or def.default
        else
            local ok, v = parse_param(def, pref)
            if not ok then
                bad[#bad + 1] = def.name
                ok, v = parse_param(def, def.default)
            end
            p[def.name] = v
        end
    end
    return p, bad
end

local PARAMS = read_params()

-- ---- extensions (WIRE.md part B; filled in below, after the byte-access helpers) ----
-- EXTENSIONS[profile] = {
--     layout = function(ctx, opcode) -> how the bytes after the BTH are laid out (ext::layout):
--              "std", "dcp_data" (keys of OPCODES), "dcp_ho" (DCP header-only: BTH + 3 bytes of
--              MSN, no ICRC) or "ext_body" (an opcode the extension defines: BTH, opaque body,
--              ICRC, no unknown-opcode warning); absent for profiles that never change it,
--     parse  = function(ctx, fr, pkt) -> a value describing what the packet carries, or nil when
--              the profile does not apply to this packet (it is then plain std); adds its
--              warnings to the frame (ext::parse),
--     visit  = function(ext, fr, pkt, emit) adding the extension's fields (Ext::visit),
-- }
-- with ctx = {tos = ToS / traffic class or nil for RoCEv1, params = PARAMS}.
local EXTENSIONS = {}

-- The preference rocescope.profile: "auto" or a profile name (PROFILE_CHOICES), as --profile
-- reads it. A string preference, not a menu: Wireshark silently keeps an enumeration's old value
-- when `-o` names no choice, where a bad profile must be reported (prefs_changed). nil when the
-- text is none of the choices.
local PROFILE_SET = {}
for _, name in ipairs(PROFILE_CHOICES) do PROFILE_SET[name] = true end
local function parse_profile(text)
    local s = string.match(text or "", "^%s*(.-)%s*$")
    if PROFILE_SET[s] then return s end
    return nil
end
local CHOICE = parse_profile(proto.prefs.profile) or PROFILE_DEFAULT
local function chosen_profile() return CHOICE end

-- ---- what tells a frame rocescope may decode (see HOW IT HOOKS INTO WIRESHARK) ----

local ROCEV2_PORT, ETHERTYPE_ROCEV1, ETHERTYPE_MAC_CONTROL = 4791, 0x8915, 0x8808
-- Wireshark's port types (pinfo.port_type): none, TCP, UDP, and infiniband's queue pairs (its
-- dissector sets them on every RoCE packet it decodes).
local PT_NONE, PT_TCP, PT_UDP, PT_IBQP = 0, 2, 3, 10

function proto.prefs_changed()
    local bad
    PARAMS, bad = read_params()
    local profile = parse_profile(proto.prefs.profile)
    if not profile then bad[#bad + 1] = "profile (one of " .. table.concat(PROFILE_CHOICES, " ") .. ")" end
    CHOICE = profile or PROFILE_DEFAULT
    VERIFY = proto.prefs.verify_checksums
    if #bad > 0 then
        report_failure("rocescope: invalid preference value for " .. table.concat(bad, ", ") .. "; using the default")
    end
end

-- ---- warnings (the texts: W, X, LAYER, NOTE, generated from codec/src/warning.rs) ----

local MAX_WARNINGS = LIMITS.warnings -- Warnings::CAPACITY: further ones are counted, not listed

-- Warning::Ext: the layer's name (LAYER[layer]) and the problem (an X text or a NOTE).
local function ext_text(layer, what) return W.ext(LAYER[layer], what) end

-- ---- byte access (offsets from 0 into the captured frame, a Lua string) ----

local function u8(s, o) return s:byte(o + 1) end
local function u16(s, o)
    local a, b = s:byte(o + 1, o + 2)
    return a * 256 + b
end
local function u24(s, o)
    local a, b, c = s:byte(o + 1, o + 3)
    return (a * 256 + b) * 256 + c
end
local function u32(s, o)
    local a, b, c, d = s:byte(o + 1, o + 4)
    return ((a * 256 + b) * 256 + c) * 256 + d
end
local function bit(v, mask) return band(v, mask) ~= 0 and 1 or 0 end

-- Fields of generated layouts (L.*): the unsigned integer of field `f` (1 to 4 bytes) of the
-- header at frame offset `at`, and the field's item.
local READ = {u8, u16, u24, u32}
local function rd(s, at, f) return READ[f.len](s, at + f.off) end
local function emit_f(emit, name, at, f, value) emit(name, at + f.off, f.len, value) end
-- Field `f` of a repeated field's `i`-th occurrence (from 0).
local function nth(f, i) return {off = f.off + f.len * i, len = f.len} end

-- ---- header fields, where their declarations put them (HDR, from codec/src/layout) ----

-- HDR[name].at[key]: a header's field by its accessor's name.
for _, h in pairs(HDR) do
    h.at = {}
    for _, fl in ipairs(h.fields) do
        h.at[fl.key] = fl
        fl.read = READ[fl.len]
        -- A bit field by arithmetic (exact on doubles below 2^53; no bit32 call per field):
        -- floor(v / 2^shift) mod 2^width.
        if fl.mask then fl.div, fl.mod = 2 ^ fl.shift, fl.mask + 1 end
    end
end
-- The value of field `fl` of the header at frame offset `o`; nil for a 64-bit field (emit lets
-- Wireshark read its bytes, big_bytes reads them).
local function field_value(s, o, fl)
    local read = fl.read
    if not read then return nil end
    local v = read(s, o + fl.off)
    if fl.div then
        local d = fl.div
        v = (v - v % d) / d % fl.mod
    end
    return v
end
-- hval(s, o, "bth", "psn"): the field `key` of the header `name` at frame offset `o`.
local function hval(s, o, name, key) return field_value(s, o, HDR[name].at[key]) end
-- hspan(o, "aeth", "msn"): that field's frame offset and length.
local function hspan(o, name, key)
    local fl = HDR[name].at[key]
    return o + fl.off, fl.len
end
-- A header's part of Frame::visit (its view's `visit`): each field with a registry name, in
-- declaration order.
local function emit_header(s, name, o, emit)
    for _, fl in ipairs(HDR[name].fields) do
        if fl.name then emit(fl.name, o + fl.off, fl.len, field_value(s, o, fl)) end
    end
end
-- What the extensions read beyond the declared fields: the DCP header-only packet's MSN (the BTH,
-- then the MSN as DCPETH spells it) and the PSN space (PSN arithmetic modulo 2^24).
local IBF = {
    ho_msn = {off = HDR.bth.len, len = HDR.dcpeth.at.msn.len},
    psn_space = 2 ^ (HDR.bth.at.psn.len * 8),
}
local function reth_va(s, reth) return big_bytes(s, hspan(reth, "reth", "va")) end

-- ---- CRC-32 (the ICRC, WIRE.md A.5) ----

local CRC_TABLE = {}
for i = 0, 255 do
    local c = i
    for _ = 1, 8 do
        if band(c, 1) ~= 0 then c = bxor(0xEDB88320, rshift(c, 1)) else c = rshift(c, 1) end
    end
    CRC_TABLE[i] = c
end
local function crc_byte(crc, b) return bxor(CRC_TABLE[band(bxor(crc, b), 0xff)], rshift(crc, 8)) end
local function crc_range(crc, s, from, to) -- bytes [from, to)
    for i = from + 1, to do crc = crc_byte(crc, s:byte(i)) end
    return crc
end
-- Bytes [from, from + n) with some of them replaced: masks[k] = value of byte k.
local function crc_masked(crc, s, from, n, masks)
    for k = 0, n - 1 do crc = crc_byte(crc, masks[k] or s:byte(from + k + 1)) end
    return crc
end

-- IcrcNet + icrc::compute: returns the value whose little-endian bytes are on the wire. A local
-- native InfiniBand packet (no network header) has its LRH covered, VL as ones; every other
-- packet has 8 bytes of ones in its place.
local function icrc_compute(fr, p)
    local s, net = fr.s, fr.net
    local crc = 0xffffffff
    if fr.lrh and not net then
        crc = crc_masked(crc, s, 0, HDR.lrh.len, {[0] = bor(u8(s, 0), 0xf0)})
    else
        for _ = 1, 8 do crc = crc_byte(crc, 0xff) end
    end
    local o = net and net.off
    if not net then -- a local InfiniBand packet: the BTH follows the LRH
    elseif net.kind == "ipv4" then
        crc = crc_masked(crc, s, o, net.hdr_len, {[1] = 0xff, [8] = 0xff, [10] = 0xff, [11] = 0xff})
        crc = crc_masked(crc, s, o + net.hdr_len, 8, {[6] = 0xff, [7] = 0xff})
    else -- ipv6, grh
        crc = crc_masked(crc, s, o, 40, {[0] = bor(u8(s, o), 0x0f), [1] = 0xff, [2] = 0xff, [3] = 0xff, [7] = 0xff})
        if net.kind == "ipv6" then
            crc = crc_masked(crc, s, o + 40, 8, {[6] = 0xff, [7] = 0xff})
        end
    end
    -- The BTH with its byte of FECN, BECN and the reserved bits masked (WIRE.md A.5).
    local bth = HDR.bth
    crc = crc_masked(crc, s, p.off, bth.len, {[bth.at.fecn.off] = 0xff})
    crc = crc_range(crc, s, p.off + bth.len, p.off + p.icrc_at)
    return bxor(crc, 0xffffffff)
end

-- ---- CRC-16 (native InfiniBand's VCRC, codec/src/ib/vcrc.rs: polynomial 0x100B reflected) ----

local VCRC_TABLE = {}
for i = 0, 255 do
    local c = i
    for _ = 1, 8 do
        if band(c, 1) ~= 0 then c = bxor(0xD008, rshift(c, 1)) else c = rshift(c, 1) end
    end
    VCRC_TABLE[i] = c
end
-- vcrc::compute over the frame's bytes [0, n): the value whose little-endian bytes are on the wire.
local function vcrc_compute(s, n)
    local c = 0xffff
    for i = 1, n do c = bxor(VCRC_TABLE[band(bxor(c, s:byte(i)), 0xff)], rshift(c, 8)) end
    return bxor(c, 0xffff)
end

-- The IPv4 header checksum (RFC 1071 over the header as captured, checksum field as zero).
local function ipv4_checksum(s, o, hl)
    local sum = 0
    for k = 0, hl - 2, 2 do
        if k ~= 10 then
            sum = sum + s:byte(o + k + 1) * 256 + s:byte(o + k + 2)
        end
    end
    while sum > 0xffff do sum = band(sum, 0xffff) + rshift(sum, 16) end
    return bxor(sum, 0xffff)
end

-- ---- the frame (codec/src/frame.rs Frame::decode) ----

-- Adds a warning; fr.nwarn counts them all, listed or not (Warnings::len).
local function warn(fr, text)
    fr.nwarn = fr.nwarn + 1
    if W.is_truncated(text) then fr.ncut = fr.ncut + 1 end
    if #fr.warnings < MAX_WARNINGS then fr.warnings[#fr.warnings + 1] = text end
end
local function ext_warn(fr, layer, what) warn(fr, ext_text(layer, what)) end
-- Warnings::problem_count: those about the packet, not about the capture ("truncated in").
local function problems(fr) return fr.nwarn - fr.ncut end

local function short(fr, layer, need, have)
    fr.truncated = true
    warn(fr, W.truncated(layer, need, have))
    return nil
end

-- RocePacket::parse_with: where each header, the payload and the ICRC are. `off` is the BTH's
-- offset in the frame, `wire_len` the packet's length on the wire (BTH .. ICRC), `layout` how the
-- profile lays out the bytes after the BTH (see EXTENSIONS).
local function parse_packet(fr, off, wire_len, layout)
    local s = fr.s
    local buflen = min(max(fr.caplen - off, 0), wire_len)
    local bth, icrc = HDR.bth.len, K.ib.icrc_len
    if wire_len < bth then warn(fr, W.too_short(LAYER.bth, wire_len, bth)) end
    if buflen < bth then
        if wire_len >= bth then warn(fr, W.truncated(LAYER.bth, bth, buflen)) end
        return nil
    end
    local op = hval(s, off, "bth", "opcode")
    if layout == "dcp_ho" then
        -- RocePacket::header_only: BTH and 3 bytes of MSN; the BTH describes the original
        -- packet, so its opcode, TVer and PadCnt raise no warnings.
        local need = bth + K.ib.ho_msn_len
        if wire_len ~= need then warn(fr, W.header_only_length(wire_len)) end
        return {off = off, buflen = buflen, wire_len = wire_len, op = op, present = {},
            hdr_end = max(min(need, wire_len), bth), payload_len = max(wire_len - need, 0)}
    end
    local info = layout ~= "ext_body" and OPCODES[layout][op] or nil
    local p = {off = off, buflen = buflen, wire_len = wire_len, op = op, info = info, present = {},
        hdr_end = bth, payload_len = 0}
    local tver = hval(s, off, "bth", "tver")
    if tver ~= 0 then warn(fr, W.tver(tver)) end
    local body_end
    if wire_len >= bth + icrc then
        p.icrc_at, body_end = wire_len - icrc, wire_len - icrc
    else
        warn(fr, W.too_short(LAYER.icrc, wire_len, bth + icrc))
        body_end = wire_len
    end
    if not info and layout ~= "ext_body" then warn(fr, W.unknown_opcode(op)) end
    if OPS.cnp_0x80[op] then warn(fr, W.cnp_0x80) end
    local at = bth
    if info then
        if at + info.hdrs_len <= body_end then
            for _, h in ipairs(info.hdrs) do p.present[h[1]] = h[2] end
            p.all_hdrs = true -- every header the opcode calls for (RocePacket::headers() == info.headers)
            at = at + info.hdrs_len
        else
            for _, h in ipairs(info.hdrs) do
                local len = HDR[h[1]].len
                if at + len > body_end then
                    warn(fr, W.too_short(HDR[h[1]].layer, max(body_end - at, 0), len))
                    p.hdr_end = max(body_end, at)
                    return p
                end
                p.present[h[1]] = h[2]
                at = at + len
            end
        end
        -- A header the capture cut is named (the headers after it are missing too).
        if buflen < at then
            for _, h in ipairs(info.hdrs) do
                local o, hd = p.present[h[1]], HDR[h[1]]
                if o and o + hd.len > buflen then
                    warn(fr, W.truncated(hd.layer, hd.len, max(buflen - o, 0)))
                    break
                end
            end
        end
    end
    local avail = max(body_end - at, 0)
    local pad = hval(s, off, "bth", "pad_cnt")
    if not info then
        p.hdr_end, p.payload_len = at, avail
        return p
    end
    if info.cnp then
        local cnp = K.ib.cnp_reserved
        if avail < cnp then warn(fr, W.too_short(LAYER.cnp, avail, cnp)) end
        if avail > cnp then warn(fr, W.unexpected_payload(avail - cnp)) end
        p.hdr_end = at + min(avail, cnp)
        p.payload_len = max(avail - cnp, 0)
        if pad ~= 0 then warn(fr, W.pad_no_payload(pad)) end
        return p
    end
    -- IRN's selective NAK: an Acknowledge with 4 bytes after the AETH whose syndrome (when
    -- captured) is NAK code 0.
    if OPS.irn_sack[op] and avail == HDR.irn_sack.len then
        local a = p.present.aeth
        local syn = a and a < buflen and hval(s, off + a, "aeth", "syndrome") or nil
        if syn == nil or AETH_SYNDROME[syn].psn_seq_error then
            p.sack_at = at
            at = at + HDR.irn_sack.len
        end
    end
    avail = max(body_end - at, 0)
    p.hdr_end = at
    if info.payload then
        if pad > avail then
            warn(fr, W.pad_too_large(pad, avail))
            p.payload_len = avail
        else
            p.payload_len = avail - pad
        end
        if OPS.rc_atomic_write[op] and p.payload_len ~= K.ib.atomic_write_len then
            warn(fr, W.atomic_write_length(p.payload_len))
        end
    else
        if pad ~= 0 then warn(fr, W.pad_no_payload(pad)) end
        if avail > 0 then warn(fr, W.unexpected_payload(avail)) end
        p.payload_len = avail
    end
    local a = p.present.aeth
    if a and a + HDR.aeth.len <= buflen then
        local syn = hval(s, off + a, "aeth", "syndrome")
        if AETH_SYNDROME[syn].kind == "reserved" then warn(fr, W.aeth_reserved(syn)) end
    end
    return p
end

-- The frame offset of a header when it is present and fully captured (RocePacket::header).
local function hdr_at(p, name)
    local o = p.present[name]
    if o and o + HDR[name].len <= p.buflen then return p.off + o end
    return nil
end

-- CmMad::new_checked on the payload of a UD SEND Only to QP1.
local function parse_cm(fr, p)
    local s, f, k = fr.s, L.cm, K.cm
    local start = p.off + p.hdr_end
    local len = max(min(p.hdr_end + p.payload_len, p.buflen) - min(p.hdr_end, p.buflen), 0)
    local err
    if len < k.header_len then
        err = len
    elseif rd(s, start, f.mgmt_class) ~= k.mgmt_class_cm then
        return
    else
        local attr = rd(s, start, f.attr_id)
        local msg = CM_MSGS[attr]
        if not msg then
            warn(fr, W.cm_attribute(attr))
            return
        end
        if len < k.need[msg] then err = len end
    end
    if err then
        if len == p.payload_len then warn(fr, W.too_short(LAYER.cm, err, k.min_len)) end
        return
    end
    fr.cm_off = start
end

-- ---- the extensions (codec/src/ext/*.rs) ----

-- The captured part of the payload (RocePacket::payload): its frame offset and length.
local function payload_span(p)
    local from = min(p.hdr_end, p.buflen)
    local to = min(p.hdr_end + p.payload_len, p.buflen)
    return p.off + from, max(to - from, 0)
end

-- ImmSplit::split: the three fields of a 32-bit immediate, most significant first.
local function imm_split(split, imm)
    local b, c = split[2], split[3]
    local first = b + c >= 32 and 0 or floor(imm / 2 ^ (b + c))
    local second = c >= 32 and 0 or floor(imm / 2 ^ c) % 2 ^ b
    return first, second, imm % 2 ^ c
end

-- sdr::bit_bytes: the bytes (offset, length) of the 4 at `at` holding bits start .. start+width
-- (bit 0 = most significant).
local function bit_bytes(at, start, width)
    local first = min(floor(start / 8), 4)
    if width == 0 then return at + first, 0 end
    return at + first, min(math.ceil((start + width) / 8), 4) - first
end

local function bool(v) return v and 1 or 0 end

-- DCP (ext/dcp.rs): the ToS tag, DCPETH / SSNETH, header-only packets, eMSN ACKs.
local function dcp_tag(tos, shift) return band(rshift(tos, shift), K.dcp.tag_mask) end

EXTENSIONS.dcp = {
    layout = function(ctx, op)
        if not ctx.tos then return "std" end
        local tag = dcp_tag(ctx.tos, ctx.params.dcp_tag_shift)
        if tag == K.dcp.tag_ho then return "dcp_ho" end
        if tag == K.dcp.tag_data and OPS.dcp_request[op] then return "dcp_data" end
        return "std"
    end,
    parse = function(ctx, fr, p)
        if not ctx.tos then return nil end
        local tag = dcp_tag(ctx.tos, ctx.params.dcp_tag_shift)
        if tag == K.dcp.tag_none then return nil end
        local emsn
        if tag == K.dcp.tag_ack and OPS.dcp_ack[p.op] then
            local a = hdr_at(p, "aeth")
            if a then emsn = hval(fr.s, a, "aeth", "msn") end
        end
        return {tag = tag, ho = tag == K.dcp.tag_ho, emsn = emsn}
    end,
    visit = function(d, fr, p, emit)
        local s, b = fr.s, p.off
        emit("rocescope.dcp.tag", nil, 0, d.tag)
        emit("rocescope.dcp.ho", nil, 0, bool(d.ho))
        local ho = IBF.ho_msn
        if d.ho and p.buflen >= ho.off + ho.len then emit_f(emit, "rocescope.dcp.msn", b, ho, rd(s, b, ho)) end
        local o = hdr_at(p, "dcpeth")
        if o then emit_header(s, "dcpeth", o, emit) end
        o = hdr_at(p, "sseth")
        if o then emit_header(s, "sseth", o, emit) end
        if d.emsn then
            local x, n = hspan(b + p.present.aeth, "aeth", "msn")
            emit("rocescope.dcp.emsn", x, n, d.emsn)
        end
    end,
}

-- NetRT (ext/netrt.rs): retransmission requests, unfulfilled requests, the retransmission mark.
-- netrt::requested: ePSN, then ePSN+1+i for every clear bit i below the highest set bit of the
-- `len`-byte bitmap at `o` (bit 0 = least significant bit of the last byte).
local function netrt_requested(epsn, s, o, len)
    local top = 0
    for i = 0, len - 1 do
        local v = u8(s, o + i)
        if v ~= 0 then
            local hb = 7
            while band(v, 2 ^ hb) == 0 do hb = hb - 1 end
            top = 8 * (len - 1 - i) + hb + 1
            break
        end
    end
    local out = {epsn}
    for i = 0, top - 1 do
        if band(u8(s, o + len - 1 - floor(i / 8)), 2 ^ (i % 8)) == 0 then
            out[#out + 1] = (epsn + 1 + i) % IBF.psn_space
        end
    end
    return out
end

-- The BTH fields a NetRT message has zero (SE, M, PadCnt, TVer, byte 4, A).
local NETRT_ZERO_BTH = {"se", "mig_req", "pad_cnt", "tver", "fecn", "becn", "resv6", "ack_req"}

EXTENSIONS.netrt = {
    layout = function(ctx, op)
        if op == ctx.params.netrt_opcode then return "ext_body" end
        return "std"
    end,
    parse = function(ctx, fr, p)
        local s, b = fr.s, p.off
        local n = L.netrt
        if p.op ~= ctx.params.netrt_opcode then return {data = true, rtx_mark = bit(hval(s, b, "bth", "resv6"), K.netrt.rtx_mark)} end
        for _, k in ipairs(NETRT_ZERO_BTH) do
            if hval(s, b, "bth", k) ~= 0 then
                ext_warn(fr, "netrt", NOTE.netrt_bth_flags)
                break
            end
        end
        local at, cap = payload_span(p)
        if cap == 0 then
            -- No body on the wire is a short message; one the snaplen cut, the frame says so.
            if p.payload_len == 0 then ext_warn(fr, "netrt", X.short(0, K.netrt.unfulfilled_len)) end
            return nil
        end
        local ty = rd(s, at, n.type)
        local want = (ty == K.netrt.type_request and K.netrt.request_len)
            or (ty == K.netrt.type_unfulfilled and K.netrt.unfulfilled_len) or nil
        if not want then
            ext_warn(fr, "netrt", X.type(ty))
            return nil
        end
        if p.payload_len ~= want then
            ext_warn(fr, "netrt", X.body_length(p.payload_len, want))
            return nil
        end
        if cap < want then return nil end -- cut by the snaplen: the frame says so
        local psn, bth_psn = rd(s, at, n.psn), hval(s, b, "bth", "psn")
        local request = ty == K.netrt.type_request
        if psn ~= bth_psn then
            local field = request and "rocescope.netrt.epsn" or "rocescope.netrt.unfulfilled_psn"
            ext_warn(fr, "netrt", X.mismatch(field, psn, bth_psn))
        end
        return {kind = request and "request" or "unfulfilled", psn = psn}
    end,
    visit = function(n, fr, p, emit)
        local f = L.netrt
        if n.data then
            local x, len = hspan(p.off, "bth", "resv6")
            emit("rocescope.netrt.rtx_mark", x, len, n.rtx_mark)
            return
        end
        local body = p.off + p.hdr_end
        emit_f(emit, "rocescope.netrt.type", body, f.type, n.kind)
        if n.kind == "request" then
            emit_f(emit, "rocescope.netrt.epsn", body, f.psn, n.psn)
            emit_f(emit, "rocescope.netrt.bitmap", body, f.bitmap)
            for _, psn in ipairs(netrt_requested(n.psn, fr.s, body + f.bitmap.off, f.bitmap.len)) do
                emit_f(emit, "rocescope.netrt.requested", body, f.bitmap, psn)
            end
        else
            emit_f(emit, "rocescope.netrt.unfulfilled_psn", body, f.psn, n.psn)
        end
    end,
}

-- SDR (ext/sdr.rs): data packets (the immediate) and control messages.
local function sack_len(bits) return math.ceil(bits / 8) end

-- Ctrl::parse on the payload at `at` (`cap` bytes captured, `wire_len` on the wire).
local function sdr_ctrl_parse(fr, at, cap, wire_len)
    local s, f, k = fr.s, L.sdr_ctrl, K.sdr
    if cap > f.magic.off and rd(s, at, f.magic) ~= k.magic then
        ext_warn(fr, "sdr", X.magic(rd(s, at, f.magic), k.magic))
        return nil
    end
    if cap > f.version.off and rd(s, at, f.version) ~= k.version then
        ext_warn(fr, "sdr", X.version(rd(s, at, f.version), k.version))
        return nil
    end
    local kind
    if cap > f.type.off then
        kind = SDR_CTRL[rd(s, at, f.type)]
        if not kind then
            ext_warn(fr, "sdr", X.type(rd(s, at, f.type)))
            return nil
        end
    end
    local hl = k.ctrl_header_len
    if wire_len < hl then
        ext_warn(fr, "sdr", X.short(wire_len, hl))
        return nil
    end
    if cap < hl then return nil end -- cut by the snaplen
    local body = wire_len - hl
    local fixed = k.body_fixed[kind]
    if body < fixed then
        ext_warn(fr, "sdr", X.body_length(body, fixed))
        return nil
    end
    if cap < hl + fixed then return nil end
    local c = {ctrl = true, kind = kind, msg_seq = rd(s, at, f.msg_seq)}
    local want = fixed
    if kind == "sr_ack" then
        c.cum_ack, c.sack_bits = rd(s, at, f.cum_ack), rd(s, at, f.sack_bits)
        want = fixed + sack_len(c.sack_bits)
    elseif kind == "sr_nack" or kind == "ec_nack" then
        c.count = rd(s, at, f.count)
        want = fixed + f.index.len * c.count
    end
    if body ~= want then
        ext_warn(fr, "sdr", X.body_length(body, want))
        return nil
    end
    if rd(s, at, f.flags) ~= 0 then ext_warn(fr, "sdr", NOTE.sdr_ctrl_flags) end
    if kind == "sr_ack" then
        local n, used = sack_len(c.sack_bits), c.sack_bits % 8
        local last = f.sack.off + n - 1
        if used ~= 0 and n > 0 and last < cap and floor(u8(s, at + last) / 2 ^ used) ~= 0 then
            ext_warn(fr, "sdr", NOTE.sdr_sack_trailing_bits)
        end
    end
    return c
end

local function sdr_ctrl_visit(c, fr, at, cap, emit)
    local s, f = fr.s, L.sdr_ctrl
    emit_f(emit, "rocescope.sdr.ctrl.type", at, f.type, c.kind)
    emit_f(emit, "rocescope.sdr.ctrl.msg_seq", at, f.msg_seq, c.msg_seq)
    if c.kind == "cts" then
        emit_f(emit, "rocescope.sdr.ctrl.buf_len", at, f.buf_len)
    elseif c.kind == "sr_ack" then
        emit_f(emit, "rocescope.sdr.ctrl.cum_ack", at, f.cum_ack, c.cum_ack)
        emit_f(emit, "rocescope.sdr.ctrl.sack_bits", at, f.sack_bits, c.sack_bits)
        local n = sack_len(c.sack_bits)
        -- An empty bitmap (sack_bits 0) prints as nothing, as rocescope's empty byte string.
        if n > 0 and f.sack.off + n <= cap then emit("rocescope.sdr.ctrl.sack", at + f.sack.off, n) end
    elseif c.kind == "sr_nack" or c.kind == "ec_nack" then
        emit_f(emit, "rocescope.sdr.ctrl.count", at, f.count, c.count)
        local i = 0
        while i < c.count and nth(f.index, i).off + f.index.len <= cap do
            local e = nth(f.index, i)
            emit_f(emit, "rocescope.sdr.ctrl.indices", at, e, rd(s, at, e))
            i = i + 1
        end
    end
end

EXTENSIONS.sdr = {
    parse = function(ctx, fr, p)
        if OPS.sdr_data[p.op] then
            local o = hdr_at(p, "immdt")
            if not o then return nil end
            local split = ctx.params.sdr_split
            local msg_id, pkt_off, frag = imm_split(split, hval(fr.s, o, "immdt", "imm"))
            return {data = true, msg_id = msg_id, pkt_off = pkt_off, frag = frag, split = split}
        end
        if OPS.sdr_ctrl[p.op] then
            local at, cap = payload_span(p)
            return sdr_ctrl_parse(fr, at, cap, p.payload_len)
        end
        return nil
    end,
    visit = function(d, fr, p, emit)
        if d.ctrl then
            local _, cap = payload_span(p)
            sdr_ctrl_visit(d, fr, p.off + p.hdr_end, cap, emit)
            return
        end
        local o = p.present.immdt
        if not o then return end
        local at = p.off + o
        local id, off, fr_bits = d.split[1], d.split[2], d.split[3]
        local x, n = bit_bytes(at, 0, id)
        emit("rocescope.sdr.msg_id", x, n, d.msg_id)
        x, n = bit_bytes(at, id, off)
        emit("rocescope.sdr.pkt_off", x, n, d.pkt_off)
        if fr_bits ~= 0 then
            x, n = bit_bytes(at, id + off, fr_bits)
            emit("rocescope.sdr.imm_frag", x, n, d.frag)
        end
    end,
}

-- Flor (ext/flor.rs): WRITE immediates, the SEND header (ADDR bodies), the software ACK.

-- WriteRn::visit: hint (if asked and the split gives it a bit), mid, chunk_off of the 4 bytes at `at`.
local function flor_write_visit(split, imm, at, with_hint, emit)
    local h, m, o = split[1], split[2], split[3]
    local hint, mid, chunk_off = imm_split(split, imm)
    local x, n
    if with_hint and h ~= 0 then
        x, n = bit_bytes(at, 0, h)
        emit("rocescope.flor.hint", x, n, bool(hint ~= 0))
    end
    x, n = bit_bytes(at, h, m)
    emit("rocescope.flor.mid", x, n, mid)
    x, n = bit_bytes(at, h + m, o)
    emit("rocescope.flor.chunk_off", x, n, chunk_off)
end

-- SendHeader::parse (warnings to `fr`, or to nobody when fr is nil: the detection check).
local function flor_send_parse(fr, s, at, cap, wire_len, only)
    local f, k = L.flor_send, K.flor
    local nwarn = 0
    local function w(what)
        nwarn = nwarn + 1
        if fr then ext_warn(fr, "flor", what) end
    end
    if cap > f.version.off and rd(s, at, f.version) ~= k.version then
        w(X.version(rd(s, at, f.version), k.version))
        return nil, nwarn
    end
    local kind
    if cap > f.type.off then
        kind = FLOR_SEND[rd(s, at, f.type)]
        if not kind then
            w(X.type(rd(s, at, f.type)))
            return nil, nwarn
        end
    end
    local hl = k.send_header_len
    if wire_len < hl then
        w(X.short(wire_len, hl))
        return nil, nwarn
    end
    if cap < hl then return nil, nwarn end
    local h = {send = true, kind = kind, flags = rd(s, at, f.flags), write_rn = rd(s, at, f.write_rn),
        body_len = rd(s, at, f.body_len)}
    if band(h.flags, k.flags_reserved) ~= 0 or rd(s, at, f.reserved) ~= 0 then w(NOTE.flor_reserved) end
    if kind ~= "write_retx" and h.write_rn ~= 0 then w(NOTE.flor_write_rn_not_retx) end
    local present = wire_len - hl
    if (only and h.body_len ~= present) or (not only and h.body_len < present) then
        w(X.mismatch("rocescope.flor.send.body_len", h.body_len, present))
    end
    local want = k.addr_len[kind]
    if want then
        if h.body_len ~= want then
            w(X.body_length(h.body_len, want))
        else
            h.has_addr = present >= want and cap >= hl + want
        end
    end
    return h, nwarn
end

local function flor_send_visit(h, fr, at, split, emit)
    local s, f = fr.s, L.flor_send
    emit_f(emit, "rocescope.flor.send.type", at, f.type, h.kind)
    emit_f(emit, "rocescope.flor.send.flags", at, f.flags, h.flags)
    emit_f(emit, "rocescope.flor.hint", at, f.flags, bit(h.flags, K.flor.flag_hint))
    emit_f(emit, "rocescope.flor.send.rn", at, f.rn, rd(s, at, f.rn))
    emit_f(emit, "rocescope.flor.send.gn", at, f.gn)
    emit_f(emit, "rocescope.flor.send.write_rn", at, f.write_rn, h.write_rn)
    if h.kind == "write_retx" then flor_write_visit(split, h.write_rn, at + f.write_rn.off, false, emit) end
    emit_f(emit, "rocescope.flor.send.body_len", at, f.body_len, h.body_len)
    if h.has_addr then
        local b = at + K.flor.send_header_len
        if h.kind == "addr_req" then
            local a = L.flor_addr_req
            emit_f(emit, "rocescope.flor.addr.mid", b, a.mid, rd(s, b, a.mid))
            emit_f(emit, "rocescope.flor.addr.msg_len", b, a.msg_len)
        else
            local a = L.flor_addr_resp
            emit_f(emit, "rocescope.flor.addr.mid", b, a.mid, rd(s, b, a.mid))
            emit_f(emit, "rocescope.flor.addr.r_key", b, a.r_key, rd(s, b, a.r_key))
            emit_f(emit, "rocescope.flor.addr.va", b, a.va)
            emit_f(emit, "rocescope.flor.addr.buf_len", b, a.buf_len)
        end
    end
end

-- Ack::parse (warnings to `fr`, or to nobody when fr is nil).
local function flor_ack_parse(fr, s, at, cap, wire_len, set_means)
    local f, k = L.flor_ack, K.flor
    local nwarn = 0
    local function w(what)
        nwarn = nwarn + 1
        if fr then ext_warn(fr, "flor_ack", what) end
    end
    local hl, el = k.ack_header_len, f.entry.len
    local n = floor((wire_len - hl) / el)
    if wire_len < hl + el or wire_len % el ~= 0 or n > k.ack_max_entries then
        w(NOTE.flor_ack_length)
        return nil, nwarn
    end
    if cap < hl then return nil, nwarn end
    local a = {ack = true, qpn = rd(s, at, f.qpn), bitmap = rd(s, at, f.bitmap), count = n, set_means = set_means}
    if band(a.qpn, k.ack_qpn_high) ~= 0 then w(NOTE.flor_ack_qpn_high) end
    local bits = f.bitmap.len * 8
    if n < bits and a.bitmap % 2 ^ (bits - n) ~= 0 then w(NOTE.flor_ack_bitmap_beyond) end
    return a, nwarn
end

local function flor_ack_visit(a, fr, at, cap, emit)
    local s, f = fr.s, L.flor_ack
    emit_f(emit, "rocescope.flor.ack.qpn", at, f.qpn, a.qpn)
    emit_f(emit, "rocescope.flor.ack.bitmap", at, f.bitmap)
    emit_f(emit, "rocescope.flor.ack.least_gn", at, f.least_gn)
    emit_f(emit, "rocescope.flor.ack.delay_ns", at, f.delay_ns)
    emit("rocescope.flor.ack.count", nil, 0, a.count)
    local least_gn = big_bytes(s, at + f.least_gn.off, f.least_gn.len)
    local bits = f.bitmap.len * 8
    local i = 0
    while i < a.count and nth(f.entry, i).off + f.entry.len <= cap do
        local ef = nth(f.entry, i)
        local e = rd(s, at, ef)
        local set = floor(a.bitmap / 2 ^ (bits - 1 - i)) % 2 == 1
        local is_send = (a.set_means == "send") == set
        local lo, hi = e, 0
        if is_send then lo, hi = big_halves(big_low64(big_add(least_gn, big(e)))) end
        emit_f(emit, "rocescope.flor.ack.acked", at, ef, UInt64.new(lo, hi))
        i = i + 1
    end
end

EXTENSIONS.flor = {
    parse = function(ctx, fr, p)
        local params = ctx.params
        if OPS.flor_write_imm[p.op] then
            local o = hdr_at(p, "immdt")
            if not o then return nil end
            return {write = true, imm = hval(fr.s, o, "immdt", "imm"), split = params.flor_split}
        end
        local only = OPS.flor_send_header[p.op]
        if only ~= nil then
            local at, cap = payload_span(p)
            local h = flor_send_parse(fr, fr.s, at, cap, p.payload_len, only)
            if h then h.split = params.flor_split end
            return h
        end
        if OPS.flor_ack[p.op] then
            local at, cap = payload_span(p)
            return (flor_ack_parse(fr, fr.s, at, cap, p.payload_len, params.flor_ack_set_means))
        end
        return nil
    end,
    visit = function(x, fr, p, emit)
        local _, cap = payload_span(p)
        local at = p.off + p.hdr_end
        if x.write then
            local o = p.present.immdt
            if o then flor_write_visit(x.split, x.imm, p.off + o, true, emit) end
        elseif x.send then
            flor_send_visit(x, fr, at, x.split, emit)
        else
            flor_ack_visit(x, fr, at, cap, emit)
        end
    end,
}

-- ERD (ext/erd.rs): the EETH of RD / UD SENDs.

-- erd::applies: an EETH-carrying opcode with all its headers, not UD to QP0 / QP1.
local function erd_applies(s, p)
    return OPS.erd_eeth[p.op] and p.info ~= nil and p.all_hdrs == true
        and not (OPS.ud[p.op] and hval(s, p.off, "bth", "dest_qp") <= K.erd.mgmt_qp_max)
end

EXTENSIONS.erd = {
    parse = function(ctx, fr, p)
        local s, el = fr.s, K.erd.eeth_len
        if not erd_applies(s, p) then return nil end
        local len = p.payload_len
        if len < el then
            ext_warn(fr, "erd", X.short(len, el))
            return nil
        end
        local at, cap = payload_span(p)
        if cap < el then return nil end
        local s_len = rd(s, at, L.erd_eeth.s_len)
        if s_len ~= len - el then ext_warn(fr, "erd", X.mismatch("rocescope.erd.s_len", s_len, len - el)) end
        return {eeth = true}
    end,
    visit = function(e, fr, p, emit)
        local s, o, f = fr.s, p.off + p.hdr_end, L.erd_eeth
        local flags = rd(s, o, f.flags)
        emit_f(emit, "rocescope.erd.type", o, f.flags, bit(flags, K.erd.type_bit))
        emit_f(emit, "rocescope.erd.last", o, f.flags, bit(flags, K.erd.last_bit))
        emit_f(emit, "rocescope.erd.msg_id", o, f.msg_id, rd(s, o, f.msg_id))
        emit_f(emit, "rocescope.erd.s_len", o, f.s_len, rd(s, o, f.s_len))
        emit_f(emit, "rocescope.erd.s_offset", o, f.s_offset, rd(s, o, f.s_offset))
    end,
}

-- The IPv4 ToS / IPv6 traffic class (Frame::tos); nil for RoCEv1, as extensions see it.
local function ctx_tos(fr)
    local net, s = fr.net, fr.s
    if net.kind == "ipv4" then return u8(s, net.off + 1) end
    if net.kind == "ipv6" then return band(u8(s, net.off) * 16 + rshift(u8(s, net.off + 1), 4), 0xff) end
    return nil
end

local function parse_roce(fr, off, wire_len)
    fr.roce_off = off
    local profile = fr.decode_profile
    local ext, ctx = EXTENSIONS[profile], nil
    local layout = "std"
    if ext and off < fr.caplen then
        ctx = {tos = ctx_tos(fr), params = PARAMS}
        layout = ext.layout and ext.layout(ctx, u8(fr.s, off)) or "std"
    end
    local p = parse_packet(fr, off, wire_len, layout)
    if not p then
        if max(fr.caplen - off, 0) < wire_len then fr.truncated = true end
        return
    end
    if p.buflen < p.wire_len then fr.truncated = true end
    fr.roce = p
    if ctx then
        fr.ext = ext.parse(ctx, fr, p)
        if fr.ext then fr.profile = profile end
    end
    if not p.icrc_at then
        fr.icrc = "absent"
    elseif not fr.verify then
        fr.icrc = nil -- IcrcStatus::Unchecked (or Truncated: not told apart, neither is shown)
        if p.icrc_at + 4 > p.buflen then fr.icrc = "truncated" end
    elseif p.icrc_at + 4 <= p.buflen then
        local s, o = fr.s, off + p.icrc_at
        local wire = u8(s, o) + u8(s, o + 1) * 0x100 + u8(s, o + 2) * 0x10000 + u8(s, o + 3) * 0x1000000
        -- The same frame is parsed once per profile tried (auto): compute its ICRC once.
        local computed = fr.memo[p.icrc_at]
        if not computed then
            computed = icrc_compute(fr, p)
            fr.memo[p.icrc_at] = computed
        end
        if wire == computed then
            fr.icrc = "good"
        else
            warn(fr, W.icrc_mismatch(wire, computed))
            fr.icrc = "bad"
        end
    else
        fr.icrc = "truncated"
    end
    if OPS.cm[p.op] and hval(fr.s, off, "bth", "dest_qp") == K.cm.qp then parse_cm(fr, p) end
end

-- Frame::parse_tcp: only the header's length is checked (ERD's NACK stream, which needs the
-- segments in order, is reassembled by the stateful decoder below). `seg_len` is the IP payload
-- length on the wire.
local function parse_tcp(fr, off, seg_len)
    local have = max(min(off + seg_len, fr.caplen) - min(off, fr.caplen), 0)
    local need = 20
    if have >= 20 then
        local hl = rshift(band(u8(fr.s, off + 12), 0xf0), 2)
        if hl < 20 then
            warn(fr, W.too_short(LAYER.tcp, hl, 20))
            return
        end
        if have >= hl then
            fr.tcp_off, fr.tcp_end = off, off + seg_len
            return
        end
        need = hl
    end
    if seg_len < need then
        warn(fr, W.too_short(LAYER.tcp, seg_len, need))
    else
        fr.truncated = true
        warn(fr, W.truncated(LAYER.tcp, need, have))
    end
end

local function parse_ip(fr, l3)
    local s = fr.s
    local have = fr.caplen - l3
    local on_wire = fr.wire_len - l3
    if have <= 0 then
        fr.truncated = true
        warn(fr, W.truncated(LAYER.ipv4, 20, 0))
        return
    end
    local version = rshift(u8(s, l3), 4)
    local net, hdr_len, ip_len, ipproto, layer
    if version == 4 then
        local ihl = band(u8(s, l3), 0x0f)
        local need = max(ihl * 4, 20)
        if have < need then
            fr.truncated = true
            warn(fr, W.truncated(LAYER.ipv4, need, have))
            return
        end
        if ihl < 5 then
            warn(fr, W.too_short(LAYER.ipv4, ihl * 4, 20))
            return
        end
        local flags = u16(s, l3 + 6)
        if band(flags, 0x2000) ~= 0 or band(flags, 0x1fff) ~= 0 then
            warn(fr, W.ipv4_fragment)
            return
        end
        hdr_len = ihl * 4
        if fr.verify then
            local wire_sum, computed = u16(s, l3 + 10), ipv4_checksum(s, l3, hdr_len)
            if wire_sum ~= computed then warn(fr, W.ipv4_checksum(wire_sum, computed)) end
        end
        net = {kind = "ipv4", off = l3, hdr_len = hdr_len}
        ip_len, ipproto, layer = u16(s, l3 + 2), u8(s, l3 + 9), LAYER.ipv4
    elseif version == 6 then
        if have < 40 then
            fr.truncated = true
            warn(fr, W.truncated(LAYER.ipv6, 40, have))
            return
        end
        local nh = u8(s, l3 + 6)
        if nh == 0 or nh == 43 or nh == 44 or nh == 60 then warn(fr, W.ipv6_ext) end
        hdr_len = 40
        net = {kind = "ipv6", off = l3, hdr_len = 40}
        ip_len, ipproto, layer = 40 + u16(s, l3 + 4), nh, LAYER.ipv6
    else
        return
    end
    fr.net = net
    if ip_len > on_wire then
        warn(fr, W.beyond_frame(layer, ip_len, on_wire))
        ip_len = on_wire
    end
    fr.truncated = have < ip_len
    if ipproto == 6 then return parse_tcp(fr, l3 + hdr_len, max(ip_len - hdr_len, 0)) end
    if ipproto ~= 17 then return end
    local udp = l3 + hdr_len
    if fr.caplen - udp < 8 then
        fr.truncated = true
        warn(fr, W.truncated(LAYER.udp, 8, have - hdr_len))
        return
    end
    fr.udp_off = udp
    local sport, dport = u16(s, udp), u16(s, udp + 2)
    if sport ~= ROCEV2_PORT and dport ~= ROCEV2_PORT then return end
    local ip_payload = max(ip_len - hdr_len, 0)
    local udp_len = u16(s, udp + 4)
    local roce_len = max(udp_len - 8, 0)
    if udp_len < 8 then
        warn(fr, W.too_short(LAYER.udp, udp_len, 8))
    elseif udp_len ~= ip_payload then
        warn(fr, W.ip_udp_mismatch(ip_payload, udp_len))
        roce_len = min(roce_len, max(ip_payload - 8, 0))
    end
    parse_roce(fr, udp + 8, roce_len)
end

local function parse_grh(fr, l3)
    local s = fr.s
    local have = fr.caplen - l3
    if have < 40 then
        fr.truncated = true
        warn(fr, W.truncated(LAYER.grh, 40, have))
        return
    end
    fr.net = {kind = "grh", off = l3, hdr_len = 40}
    if u8(s, l3 + 6) ~= 0x1b then
        warn(fr, W.grh_next_header)
        return
    end
    local len = u16(s, l3 + 4)
    local on_wire = fr.wire_len - l3 - 40
    if len > on_wire then
        warn(fr, W.beyond_frame(LAYER.grh, len, on_wire))
        len = on_wire
    end
    parse_roce(fr, l3 + 40, len)
end

-- Frame::parse_ib: native InfiniBand (link type 247, docs/link-types.md). The LRH (HDR.lrh), whose
-- PktLen counts the words from its first byte through the ICRC; the VCRC after them when the frame
-- is that long; then the BTH (LNH local), a GRH and the BTH (LNH global), or a raw packet (flagged).
local function parse_ib(fr)
    local s, n, w = fr.s, fr.caplen, fr.wire_len
    local lrh = HDR.lrh.len
    if n < lrh then
        if n < w then return short(fr, LAYER.lrh, lrh, n) end
        warn(fr, W.too_short(LAYER.lrh, w, lrh))
        return
    end
    fr.lrh = true
    local pkt_len = hval(s, 0, "lrh", "pkt_len") * K.ib.pkt_len_unit
    if pkt_len < lrh then
        fr.truncated = n < w
        fr.vcrc = "absent"
        warn(fr, W.too_short(LAYER.lrh, pkt_len, lrh))
        return
    end
    local vlen = K.ib.vcrc_len
    if pkt_len > w then
        warn(fr, W.beyond_frame(LAYER.lrh, pkt_len, w))
        pkt_len = w
    elseif w >= pkt_len + vlen then
        fr.vcrc_off = pkt_len
    end
    local o = fr.vcrc_off
    if not o then
        fr.vcrc = "absent"
    elseif o + vlen > n then
        fr.truncated = true
        fr.vcrc = "truncated"
    else
        local wire = u8(s, o) + u8(s, o + 1) * 256
        local computed = vcrc_compute(s, o)
        if wire == computed then
            fr.vcrc = "good"
        else
            warn(fr, W.vcrc_mismatch(wire, computed))
            fr.vcrc = "bad"
        end
    end
    local lnh = hval(s, 0, "lrh", "lnh")
    if lnh == K.ib.lnh_local then
        parse_roce(fr, lrh, pkt_len - lrh)
    elseif lnh == K.ib.lnh_global then
        if pkt_len < lrh + 40 then
            fr.truncated = n < pkt_len
            warn(fr, W.too_short(LAYER.lrh, pkt_len, lrh + 40))
            return
        end
        local have = n - lrh
        if have < 40 then
            fr.truncated = true
            warn(fr, W.truncated(LAYER.grh, 40, have))
            return
        end
        fr.net = {kind = "grh", off = lrh, hdr_len = 40}
        if u8(s, lrh + 6) ~= 0x1b then
            warn(fr, W.grh_next_header)
            return
        end
        parse_roce(fr, lrh + 40, max(pkt_len - lrh - 40, 0))
    else
        warn(fr, W.lrh_raw_packet)
    end
end

-- mac_control.rs: PAUSE (one pause time), PFC (class-enable vector, eight), K.mac_control.
local function parse_mac_control(fr, off)
    local have = fr.caplen - off
    local oplen = K.mac_control.opcode_len
    if have < oplen then
        fr.truncated = true
        warn(fr, W.truncated(LAYER.pfc, oplen, have))
        return
    end
    local op = READ[oplen](fr.s, off)
    local need = K.mac_control.ops[op] and K.mac_control.ops[op].need
    if not need then
        warn(fr, W.mac_control_opcode(op))
    elseif have < need then
        fr.truncated = true
        warn(fr, W.truncated(LAYER.pfc, need, have))
    else
        fr.mac_ctrl_off, fr.mac_ctrl_op = off, op
    end
end

-- Frame::short: a link header or VLAN tag that does not fit, cut by the capture (`have` of
-- `need` captured, more on the wire) or in a frame itself too short (`on_wire` bytes).
local function link_short(fr, layer, need, have, on_wire)
    if have < on_wire then return short(fr, layer, need, have) end
    warn(fr, W.too_short(layer, on_wire, need))
    return nil
end

-- Frame::parse_link: the EtherType after any VLAN tags and the offset of what follows.
local function parse_link(fr)
    local s, n, w = fr.s, fr.caplen, fr.wire_len
    local ethertype, off
    if fr.link == "eth" then
        if n < 14 then return link_short(fr, LAYER.link, 14, n, w) end
        ethertype, off = u16(s, 12), 14
    elseif fr.link == "sll" then
        if n < 16 then return link_short(fr, LAYER.link, 16, n, w) end
        ethertype, off = u16(s, 14), 16
    elseif fr.link == "sll2" then
        if n < 20 then return link_short(fr, LAYER.link, 20, n, w) end
        ethertype, off = u16(s, 0), 20
    else -- raw IP
        if n < 1 then return link_short(fr, LAYER.link, 1, 0, w) end
        local v = rshift(u8(s, 0), 4)
        if v == 4 then
            ethertype, off = 0x0800, 0
        elseif v == 6 then
            ethertype, off = 0x86dd, 0
        else
            return nil
        end
    end
    local vlans = 0
    while ethertype == 0x8100 or ethertype == 0x88a8 or ethertype == 0x9100 do
        if vlans == 2 then
            warn(fr, W.vlan_depth)
            return nil
        end
        if n - off < 4 then return link_short(fr, LAYER.vlan, 4, n - off, w - off) end
        vlans = vlans + 1
        ethertype, off = u16(s, off + 2), off + 4
    end
    return ethertype, off
end

-- Frame::decode. `s` holds the captured bytes, `wire_len` the frame's length on the wire,
-- `profile` the profile to decode RoCE with (std dcp sdr flor netrt erd), `memo` a table shared
-- by the decodes of one frame (or nil), `verify` whether to verify the ICRC and the IPv4 header
-- checksum (DecodeOptions::verify).
local function decode(link, s, wire_len, profile, memo, verify)
    local fr = {link = link, s = s, caplen = #s, wire_len = max(wire_len, #s), warnings = {}, nwarn = 0, ncut = 0,
        truncated = false, profile = "std", decode_profile = profile or "std", memo = memo or {}, verify = verify}
    if link == "ib" then
        parse_ib(fr)
        return fr
    end
    local ethertype, l3 = parse_link(fr)
    fr.ethertype, fr.l3 = ethertype, l3
    if not ethertype then
        fr.truncated = fr.caplen < fr.wire_len
        return fr
    end
    if ethertype == 0x0800 or ethertype == 0x86dd then
        parse_ip(fr, l3)
    elseif ethertype == ETHERTYPE_ROCEV1 then
        parse_grh(fr, l3)
    elseif ethertype == ETHERTYPE_MAC_CONTROL then
        parse_mac_control(fr, l3)
    else
        fr.truncated = fr.caplen < fr.wire_len
    end
    return fr
end

-- ---- the stateful decoder (codec/src/decoder/ Decoder) ----
-- What only a sequence of packets reveals: the profile of each flow (`auto`), SDR user
-- immediates and VA checks (decoder/sdr_tracker.rs SdrTracker), ERD NACK messages (decoder/erd_nacks.rs
-- NackReassembler). Memory is bounded as the codec bounds it.

-- Frame::ip_addrs, as raw byte strings (IPv4, IPv6 or GRH GIDs).
local function ip_addrs(fr)
    local net, s = fr.net, fr.s
    if not net then return nil end
    local o = net.off
    if net.kind == "ipv4" then return s:sub(o + 13, o + 16), s:sub(o + 17, o + 20) end
    return s:sub(o + 9, o + 24), s:sub(o + 25, o + 40)
end

-- SDR (SdrTracker) --

local SDR_MAX_FLOWS, SDR_MAX_MSGS = LIMITS.sdr_flows, LIMITS.sdr_msgs_per_flow

-- sdr::effective_mtu
local function sdr_effective_mtu(params, seen_max)
    if params.sdr_mtu and params.sdr_mtu ~= 0 then return params.sdr_mtu end
    if seen_max ~= 0 then return seen_max end
    return PARAM_FALLBACK.sdr_mtu
end

-- sdr::expected_va (msg_id · max_message + pkt_off · MTU) as a big; nil beyond 64 bits.
local function sdr_expected_va(params, mtu, msg_id, pkt_off)
    local max_message = params.sdr_max_message or big_mul(big(mtu), big_pow2(min(params.sdr_split[2], 64)))
    local va = big_add(big_mul(big(msg_id), max_message), big_mul(big(pkt_off), big(mtu)))
    if #va > 4 then return nil end
    return va
end

local function sdr_drop_msg(st, id)
    if st.msgs[id] then
        st.msgs[id] = nil
        st.nmsgs = st.nmsgs - 1
    end
end

-- SdrTracker::evict_flows: keeps the most recently used half.
local function sdr_evict_flows(t)
    local ticks = {}
    for _, f in pairs(t.flows) do ticks[#ticks + 1] = f.last_use end
    table.sort(ticks)
    local cut = ticks[floor(#ticks / 2) + 1]
    for k, f in pairs(t.flows) do
        if f.last_use <= cut then
            t.flows[k] = nil
            t.count = t.count - 1
        end
    end
end

-- SdrTracker::evict_msgs: drops the message states farthest behind the frontier.
local function sdr_evict_msgs(st, id_bits)
    if st.frontier and id_bits >= 1 and id_bits <= 32 then
        local space = 2 ^ id_bits
        for id in pairs(st.msgs) do
            if (st.frontier - id) % space >= SDR_MAX_MSGS / 2 then sdr_drop_msg(st, id) end
        end
        if st.nmsgs >= SDR_MAX_MSGS then st.msgs, st.nmsgs = {}, 0 end
    else
        st.msgs, st.nmsgs = {}, 0
    end
end

-- SdrTracker::observe: returns {user_imm, va_ok, problem} for one data packet of `flow`.
local function sdr_observe(t, flow, params, d, va, dma_len, payload_len)
    local split = params.sdr_split
    local msg_id, pkt_off = d.msg_id, d.pkt_off
    t.tick = t.tick + 1
    if t.count >= SDR_MAX_FLOWS and not t.flows[flow] then sdr_evict_flows(t) end
    local st = t.flows[flow]
    if not st then
        st = {max_dma = 0, msgs = {}, nmsgs = 0, last_use = 0}
        t.flows[flow] = st
        t.count = t.count + 1
    end
    st.last_use = t.tick
    st.max_dma = max(st.max_dma, dma_len)
    local ann = {}
    -- A new message on a reused id?
    local id_bits = split[1]
    if id_bits >= 1 and id_bits <= 32 then
        local space = 2 ^ id_bits
        local f = st.frontier
        if not f then
            st.frontier = msg_id
        else
            local dist = (msg_id - f) % space
            if dist ~= 0 and dist < space / 2 then
                if dist >= st.nmsgs then
                    for id in pairs(st.msgs) do
                        local a = (id - f) % space
                        if not (a == 0 or a > dist) then sdr_drop_msg(st, id) end
                    end
                else
                    for k = 1, dist do sdr_drop_msg(st, (f + k) % space) end
                end
                st.frontier = msg_id
            end
        end
    end
    local fr_bits = split[3]
    if fr_bits ~= 0 and 32 % fr_bits == 0 then
        local fcount = 32 / fr_bits
        local full = 2 ^ fcount - 1
        if id_bits == 0 and pkt_off == 0 then
            local m = st.msgs[msg_id]
            if m and m.seen == full and m.off0 then sdr_drop_msg(st, msg_id) end
        end
        if not st.msgs[msg_id] and st.nmsgs >= SDR_MAX_MSGS then sdr_evict_msgs(st, id_bits) end
        local m = st.msgs[msg_id]
        if not m then
            m = {value = 0, seen = 0, off0 = false}
            st.msgs[msg_id] = m
            st.nmsgs = st.nmsgs + 1
        end
        m.off0 = m.off0 or pkt_off == 0
        local j = pkt_off % fcount
        local shift = 32 - fr_bits * (j + 1)
        local modulus = 2 ^ fr_bits
        local frag = d.frag % modulus
        if floor(m.seen / 2 ^ j) % 2 == 1 then
            local before = floor(m.value / 2 ^ shift) % modulus
            if before ~= frag then
                ann.problem = ext_text("sdr_data", X.mismatch("rocescope.sdr.imm_frag", frag, before))
            end
        else
            m.seen = m.seen + 2 ^ j
            m.value = m.value + frag * 2 ^ shift
        end
        if m.seen == full then ann.user_imm = m.value end
    end
    local want = sdr_expected_va(params, sdr_effective_mtu(params, st.max_dma), msg_id, pkt_off)
    ann.va_ok = want ~= nil and big_eq(want, va)
    if not ann.va_ok and not ann.problem then ann.problem = ext_text("sdr_data", NOTE.sdr_va_mismatch) end
    if not ann.problem and dma_len ~= payload_len then
        ann.problem = ext_text("sdr_data", X.mismatch("rocescope.reth.dmalen", dma_len, payload_len))
    end
    return ann
end

-- ERD NACK stream (NackReassembler) --

local NACK_MAX_LEN = LIMITS.nack_message_len -- the longest message the format allows
local NACK_MAX_STREAMS = K.erd.nack_max_streams -- NackReassembler::new
local NF = L.erd_nack
-- A message's length from its count.
local function nack_len(count) return K.erd.nack_header_len + K.erd.nack_entry_len * count end

local function signed32(v)
    v = v % U32
    if v >= 2 ^ 31 then return v - U32 end
    return v
end

-- erd::plausible: the candidate header at `q` (from 0) of `d`.
local function nack_plausible(d, q, max_len)
    local have = #d - q
    if have < NF.count.off + NF.count.len then return true end
    local len = nack_len(rd(d, q, NF.count))
    if len > max_len then return false end
    -- The reserved byte before each 24-bit field of the entries must be 0.
    local r, lim, step = K.erd.nack_header_len, min(len, have), NF.dst_qpn.off - NF.src_qpn.off
    while r < lim do
        if u8(d, q + r) ~= 0 then return false end
        r = r + step
    end
    return have <= len or u8(d, q + len) == K.erd.nack_magic
end

-- erd::hunt on d[from..]: the offset (from `from`) of the first plausible message header.
local function nack_hunt(d, from, max_len)
    local n, q = #d, from
    while q + 1 < n do
        local pos = string.find(d, string.char(K.erd.nack_magic), q + 1, true)
        if not pos or pos > n - 1 then return nil end
        q = pos - 1
        if rd(d, q, NF.version) == K.erd.nack_version and nack_plausible(d, q, max_len) then return q - from end
        q = q + 1
    end
    return nil
end

local function nack_lose_sync(stream)
    stream.hunting = true
    stream.partial = ""
end

-- Stream::consume: new in-order bytes `d`, which start at offset `d_off` of the segment's payload.
local function nack_consume(stream, d, d_off, max_len, out)
    local p, dl = 0, #d
    while true do
        if stream.hunting then
            local q = nack_hunt(d, p, max_len)
            if not q then return end
            p = p + q
            stream.hunting = false
        end
        local partial = stream.partial
        local held = #partial
        local avail = held + (dl - p)
        if avail == 0 then return end
        local function byte(i)
            if i < held then return partial:byte(i + 1) end
            return d:byte(p + i - held + 1)
        end
        local function count()
            local c = 0
            for i = NF.count.off, NF.count.off + NF.count.len - 1 do c = c * 256 + byte(i) end
            return c
        end
        local has_count = avail >= NF.count.off + NF.count.len
        local problem
        if byte(NF.magic.off) ~= K.erd.nack_magic then
            problem = X.magic(byte(NF.magic.off), K.erd.nack_magic)
        elseif avail > NF.version.off and byte(NF.version.off) ~= K.erd.nack_version then
            problem = X.version(byte(NF.version.off), K.erd.nack_version)
        elseif has_count and nack_len(count()) > max_len then
            problem = NOTE.erd_nack_too_long
        end
        if problem then
            out.warn(problem)
            -- Bytes held were checked when they arrived: search again from the bad message's
            -- first byte after its start.
            if held == 0 then p = p + 1 end
            nack_lose_sync(stream)
        else
            local len = has_count and nack_len(count()) or nil
            if not len or avail < len then
                stream.partial = partial .. d:sub(p + 1)
                return
            end
            local from_d = len - held
            local msg = held == 0 and d:sub(p + 1, p + len) or partial .. d:sub(p + 1, p + from_d)
            stream.partial = ""
            out.message(msg, d_off + p - held)
            p = p + from_d
        end
    end
end

-- NackReassembler::push_segment. `t` is the segment (tcp_segment), `s` the frame's bytes. Returns
-- the batch: {messages = {{count, start, entries = {{src, dst, psn}, ...}}, ...}, warnings,
-- poff (frame offset of the payload), cap (captured payload bytes)}.
local function nack_push(r, key, t, s)
    local batch = {messages = {}, warnings = {}, poff = t.poff, cap = t.cap}
    local out = {}
    function out.warn(what)
        if #batch.warnings < MAX_WARNINGS then batch.warnings[#batch.warnings + 1] = ext_text("erd_nack", what) end
    end
    function out.message(msg, start)
        local count = rd(msg, 0, NF.count)
        local entries = {}
        for i = 0, count - 1 do
            local o = nack_len(i)
            entries[i + 1] = {rd(msg, o, NF.src_qpn), rd(msg, o, NF.dst_qpn), rd(msg, o, NF.psn)}
        end
        batch.messages[#batch.messages + 1] = {count = count, start = start, entries = entries}
    end
    local syn, fin, rst = band(t.flags, 0x02) ~= 0, band(t.flags, 0x01) ~= 0, band(t.flags, 0x04) ~= 0
    local wire_len = max(t.wire_len, t.cap)
    local data_seq = (t.seq + (syn and 1 or 0)) % U32
    if rst then
        if r.streams[key] then
            r.streams[key] = nil
            r.count = r.count - 1
        end
        return batch
    end
    if wire_len == 0 and not syn and not fin then return batch end
    r.tick = r.tick + 1
    local stream = r.streams[key]
    if not stream then
        if wire_len == 0 and not syn then return batch end -- a bare FIN of a stream never seen
        if r.count >= NACK_MAX_STREAMS then
            local old, oldest
            for k, v in pairs(r.streams) do
                if not oldest or v.last_used < oldest then old, oldest = k, v.last_used end
            end
            r.streams[old] = nil
            r.count = r.count - 1
        end
        stream = {next_seq = data_seq, hunting = false, partial = ""}
        r.streams[key] = stream
        r.count = r.count + 1
    end
    stream.last_used = r.tick
    if syn and data_seq ~= stream.next_seq then
        -- A new connection on the same addresses and ports.
        stream.next_seq, stream.hunting, stream.partial = data_seq, false, ""
    end
    local rel = signed32(data_seq - stream.next_seq)
    local gap = rel > 0
    local skip = 0
    if gap then
        out.warn(NOTE.erd_stream_gap)
        nack_lose_sync(stream)
        stream.next_seq = data_seq
    else
        skip = -rel
    end
    if skip < t.cap then nack_consume(stream, s:sub(t.poff + skip + 1, t.poff + t.cap), skip, NACK_MAX_LEN, out) end
    local end_seq = (data_seq + wire_len) % U32
    if signed32(end_seq - stream.next_seq) > 0 then
        if max(skip, t.cap) < wire_len then
            -- The snaplen cut new bytes: a gap at the end of this segment.
            if not gap then out.warn(NOTE.erd_stream_gap) end
            nack_lose_sync(stream)
        end
        stream.next_seq = end_seq
    end
    if fin then
        local held = #stream.partial
        if not stream.hunting and held > 0 then
            local hl = K.erd.nack_header_len
            out.warn(X.short(held, held >= hl and nack_len(rd(stream.partial, 0, NF.count)) or hl))
        end
        r.streams[key] = nil
        r.count = r.count - 1
    end
    return batch
end

-- Frame::tcp: the segment of a frame whose TCP header was captured whole.
local function tcp_segment(fr)
    local s, o = fr.s, fr.tcp_off
    local poff = o + rshift(band(u8(s, o + 12), 0xf0), 2)
    return {sport = u16(s, o), dport = u16(s, o + 2), seq = u32(s, o + 4), flags = u8(s, o + 13), poff = poff,
        cap = max(min(fr.tcp_end, fr.caplen) - min(poff, fr.caplen), 0), wire_len = fr.tcp_end - poff}
end

-- Detection (Decoder::detect / try_rule) --

local UNSURE_AFTER = LIMITS.dcp_unsure_after
local PATIENCE = LIMITS.patience
local DETECTION_ORDER = {"netrt", "dcp", "sdr", "flor", "erd"}

local function psn_diff(a, b) -- psn::diff: b - a as a signed 24-bit number
    local space = IBF.psn_space
    local d = (b - a) % space
    if d >= space / 2 then return d - space end
    return d
end

-- FlowState: what detection remembers about a flow (decoder/mod.rs), and `first`, the number of
-- its first frame (where the detection warning of a flow left undecided goes).
local function new_flow_state(first)
    return {first = first, warned = false, dcp_tagged = 0, dcp_idle = 0, dcp_refuted = false, sdr_max_dma = 0,
        ambiguous = 0, unsure = false, closed = false}
end
-- FlowState::evidence: something suggests a profile, but nothing has decided it yet.
local function evidence(state) return state.ambiguous > 0 or (state.dcp_tagged > 0 and not state.dcp_refuted) end
-- FlowState::pending: its packets would wait for a decision.
local function pending(state)
    return not state.profile and not state.unsure and not state.closed and evidence(state)
end
-- FlowState::doubtful: undecided with enough evidence to flag.
local function doubtful(state)
    local unconfirmed = state.dcp_refuted and 0 or state.dcp_tagged
    return not state.profile and (state.ambiguous > 0 or unconfirmed >= UNSURE_AFTER)
end
-- FlowState::conclude: no more waiting; flagged when doubtful.
local function conclude(state)
    if not state.profile then
        state.unsure = state.unsure or doubtful(state)
        state.closed = true
    end
end
-- The detection warning of a flow left undecided (Decoder::give_out).
local function detection_warning(state)
    return ext_text("detection", state.ambiguous > 0 and NOTE.detection_ambiguous or NOTE.dcp_unconfirmed)
end

-- The problems of the packet's std reading as verification has them: detection compares
-- verified decodings whatever rocescope.verify_checksums says (Decoder::candidate).
local function std_problems(memo, link, s, wire_len, std)
    if std.verify then return problems(std) end
    if not memo.verified_std then memo.verified_std = decode(link, s, wire_len, "std", memo, true) end
    return problems(memo.verified_std)
end

-- One detection rule: the frame decoded with `rule` (verified) when the packet identifies itself
-- as such.
local function try_rule(st, rule, std, link, s, wire_len, memo, state)
    local roce, params = std.roce, PARAMS
    local op = roce.op
    if rule == "netrt" then
        if op ~= params.netrt_opcode then return nil end
        local f = decode(link, s, wire_len, "netrt", memo, true)
        return (f.ext and f.ext.kind and problems(f) == 0) and f or nil
    elseif rule == "dcp" then
        if std.net.kind == "grh" or state.dcp_refuted then return nil end
        local tag = dcp_tag(ctx_tos(std), params.dcp_tag_shift)
        if tag == K.dcp.tag_none then return nil end
        if tag == K.dcp.tag_ack then
            -- A DCP ACK (an RC Acknowledge tagged 01) answers a flow already shown to be DCP in
            -- the other direction; alone, an ACK tag is no evidence.
            local a, b = ip_addrs(std)
            if not OPS.dcp_ack[op] or not st.dcp_senders[b .. "|" .. a] then return nil end
            local f = decode(link, s, wire_len, "dcp", memo, true)
            return problems(f) <= std_problems(memo, link, s, wire_len, std) and f or nil
        end
        -- Only packets that would carry DCP headers say anything: a tagged READ response is as
        -- ordinary under DCP as outside it.
        if tag == K.dcp.tag_data and not OPS.dcp_request[op] then return nil end
        state.dcp_tagged = min(state.dcp_tagged + 1, 65535)
        if not OPS.write[op] then state.dcp_idle = min(state.dcp_idle + 1, 65535) end
        local f = decode(link, s, wire_len, "dcp", memo, true)
        local r = f.roce
        if not r then return nil end
        if tag == K.dcp.tag_ho then
            local ho = r.wire_len == IBF.ho_msn.off + IBF.ho_msn.len and problems(f) == 0
            state.dcp_refuted = state.dcp_refuted or not ho
            return ho and f or nil
        end
        if problems(f) > std_problems(memo, link, s, wire_len, std) then
            -- The DCP layout does not even parse: ordinary traffic with this DSCP.
            state.dcp_refuted = true
            return nil
        end
        local reth = hdr_at(r, "reth")
        if not reth or not OPS.write[op] then return nil end
        local psn, dma_len = hval(s, r.off, "bth", "psn"), hval(s, reth, "reth", "dma_len")
        local position = OPS.position[op]
        if position == "first" then
            state.dcp_first = {psn = psn, va = reth_va(s, reth), dma_len = dma_len, payload_len = r.payload_len}
            return nil
        elseif position == "middle" or position == "last" then
            local first = state.dcp_first
            if not first then return nil end
            local k = psn_diff(first.psn, psn)
            local ok = false
            if k > 0 and first.dma_len ~= 0 and dma_len == first.dma_len then
                local want = big_low64(big_add(first.va, big_mul(big(k), big(first.payload_len))))
                ok = big_eq(want, reth_va(s, reth))
            end
            -- Only a packet of the First's own message (the PSNs its DMA length fills) must agree
            -- with it: a Middle of another message may come between them, or before its First.
            local packets = first.payload_len == 0 and 0 or math.ceil(first.dma_len / first.payload_len)
            local same_message = k > 0 and k < packets
            state.dcp_refuted = state.dcp_refuted or (not ok and (same_message or first.dma_len == 0))
            return ok and f or nil
        end
        return nil
    elseif rule == "sdr" then
        local at, cap = payload_span(roce)
        local c = L.sdr_ctrl
        local candidate = OPS.sdr_data[op] -- or sdr::is_ctrl
            or (OPS.sdr_ctrl[op] and cap > c.version.off and rd(s, at, c.magic) == K.sdr.magic
                and rd(s, at, c.version) == K.sdr.version)
        if not candidate then return nil end
        local f = decode(link, s, wire_len, "sdr", memo, true)
        if problems(f) > std_problems(memo, link, s, wire_len, std) or not f.ext then return nil end
        if f.ext.ctrl then return f end
        local reth = hdr_at(f.roce, "reth")
        if not reth then return nil end
        state.sdr_max_dma = max(state.sdr_max_dma, hval(s, reth, "reth", "dma_len"))
        local want = sdr_expected_va(params, sdr_effective_mtu(params, state.sdr_max_dma), f.ext.msg_id, f.ext.pkt_off)
        return (want and big_eq(want, reth_va(s, reth))) and f or nil
    elseif rule == "flor" then
        local at, cap = payload_span(roce)
        local wire = roce.payload_len
        local candidate = false
        local only = OPS.flor_send_header[op]
        if only ~= nil then
            local h, n = flor_send_parse(nil, s, at, cap, wire, only)
            candidate = h ~= nil and n == 0
        elseif OPS.flor_ack[op] then
            -- WIRE.md B.3: only between two addresses that carried RC / UC RDMA WRITE with
            -- Immediate earlier in the capture (either way), or already carry Flor.
            local x, y = ip_addrs(std)
            if st.write_imm_pairs[x .. "|" .. y] or st.flor_pairs[x .. "|" .. y] then
                local a, n = flor_ack_parse(nil, s, at, cap, wire, "send")
                candidate = a ~= nil and n == 0
            end
        elseif OPS.flor_write_imm[op] then
            local a, b = ip_addrs(std)
            candidate = st.flor_pairs[a .. "|" .. b] == true
        end
        if not candidate then return nil end
        local f = decode(link, s, wire_len, "flor", memo, true)
        return (f.ext and problems(f) <= std_problems(memo, link, s, wire_len, std)) and f or nil
    elseif rule == "erd" then
        -- erd::detect on the standard reading.
        local el = K.erd.eeth_len
        if not erd_applies(s, roce) or roce.payload_len < el then return nil end
        local at, cap = payload_span(roce)
        if cap < el or rd(s, at, L.erd_eeth.s_len) ~= roce.payload_len - el then return nil end
        local f = decode(link, s, wire_len, "erd", memo, true)
        return (f.ext and problems(f) <= std_problems(memo, link, s, wire_len, std)) and f or nil
    end
    return nil
end

-- Decoder::detect: the frame decoded with its flow's profile, once known (`number`: the frame's).
-- A packet of a flow still undecided is std and provisional (fr.provisional); detection's warning (once per flow, in fr.detection) goes,
-- in this single pass, on the packet that makes the flow doubtful (a whole-capture pass moves it
-- to the flow's first packet: decode_frame).
local function detect(st, std, link, s, wire_len, memo, number)
    local a, b = ip_addrs(std)
    if not a or not std.roce then return std end
    local op = std.roce.op
    local qp = hval(s, std.roce.off, "bth", "dest_qp")
    local key = a .. b .. "/" .. qp
    std.flow = key
    local state = st.flows[key]
    if state and state.profile then
        local f = decode(link, s, wire_len, state.profile, memo, VERIFY)
        f.flow = key
        return f
    end
    state = state or new_flow_state(number)
    state.first = state.first or number
    if OPS.flor_write_imm[op] then
        -- What the Flor ACK rule asks of the addresses.
        st.write_imm_pairs[a .. "|" .. b] = true
        st.write_imm_pairs[b .. "|" .. a] = true
    end
    local n, first_rule, first_frame = 0, nil, nil
    for _, rule in ipairs(DETECTION_ORDER) do
        local f = try_rule(st, rule, std, link, s, wire_len, memo, state)
        if f then
            n = n + 1
            if n == 1 then first_rule, first_frame = rule, f end
        end
    end
    local out = std
    if n == 1 then
        state.profile = first_rule
        if first_rule == "flor" then
            st.flor_pairs[a .. "|" .. b] = true
            st.flor_pairs[b .. "|" .. a] = true
        elseif first_rule == "dcp" then
            -- Its destination's ACKs are DCP ACKs.
            st.dcp_senders[a .. "|" .. b] = true
        elseif first_rule == "netrt" then
            -- The messages travel against the data: label the served flow too.
            local rev = b .. a .. "/" .. qp
            local e = st.flows[rev]
            if not e then
                e = new_flow_state(nil)
                st.flows[rev] = e
            end
            e.profile = e.profile or "netrt"
        end
        out = VERIFY and first_frame or decode(link, s, wire_len, first_rule, memo, VERIFY)
    elseif n > 1 then
        state.ambiguous = min(state.ambiguous + 1, 65535)
    end
    local idle = state.dcp_refuted and 0 or state.dcp_idle
    if pending(state) and state.ambiguous + idle >= PATIENCE then conclude(state) end
    if not state.profile then
        -- Any later packet may still decide the flow (or, by NetRT's rule, the flow the other
        -- way), and with it how this packet reads: in a single pass its label is provisional.
        out.provisional = true
        if not state.warned and (state.unsure or doubtful(state)) then
            state.warned = true
            out.detection = detection_warning(state)
        end
    end
    out.flow = key
    st.flows[key] = state
    return out
end

-- Decoder::give_out, SDR's part: the tracker (`t`) observes a data packet decoded as SDR; the
-- annotation goes to fr.sdr, its problem to the frame's warnings. Returns the annotation.
local function sdr_annotate(t, fr, s)
    local e = fr.ext
    if fr.profile ~= "sdr" or not e.data then return nil end
    -- SDR spreads a message over several QPs: keyed by the address pair.
    local reth = hdr_at(fr.roce, "reth")
    local a, b = ip_addrs(fr)
    if not reth or not a then return nil end
    local ann = sdr_observe(t, a .. "|" .. b, PARAMS, e, reth_va(s, reth), hval(s, reth, "reth", "dma_len"),
        fr.roce.payload_len)
    fr.sdr = ann
    if ann.problem then warn(fr, ann.problem) end
    return ann
end

-- Decoder::decode: one frame with the decoder's memory (`st`), `choice` = "auto" or a profile.
-- Adds to the frame: nacks (the NACK batch of a TCP segment of the NACK port, fr.profile "erd"),
-- sdr (the SDR annotation), detection (detection's warning); `appended` lists the warnings added
-- to the frame's own.
local function decode_stateful(st, link, s, wire_len, choice, number)
    local memo = {}
    local std = decode(link, s, wire_len, "std", memo, VERIFY)
    if std.tcp_off then
        -- ERD's NACK path: TCP to or from the NACK port, under erd or auto.
        if choice == "erd" or choice == "auto" then
            local t = tcp_segment(std)
            local port = PARAMS.erd_nack_port
            if t.sport == port or t.dport == port then
                local a, b = ip_addrs(std)
                local batch = nack_push(st.nack, a .. "|" .. b .. ":" .. t.sport .. ":" .. t.dport, t, s)
                for _, w in ipairs(batch.warnings) do warn(std, w) end
                std.nacks, std.profile, std.appended = batch, "erd", batch.warnings
            end
        end
        return std
    end
    local fr
    if choice == "auto" then
        fr = detect(st, std, link, s, wire_len, memo, number)
    elseif choice == "std" then
        fr = std
    else
        fr = decode(link, s, wire_len, choice, memo, VERIFY)
    end
    local ann = sdr_annotate(st.sdr, fr, s)
    if ann and ann.problem then fr.appended = {ann.problem} end
    return fr
end

-- The decoder's memory: reset by proto.init (a file is opened or reloaded, a preference changed).
local function new_sdr_tracker() return {flows = {}, count = 0, tick = 0} end
local function new_state()
    return {flows = {}, flor_pairs = {}, dcp_senders = {}, write_imm_pairs = {}, sdr = new_sdr_tracker(),
        nack = {streams = {}, count = 0, tick = 0}, frames = {}, last = 0, prev = {},
        final = {sdr = new_sdr_tracker(), last = 0, ann = {}}}
end
local STATE = new_state()

-- A frame as the decoder's first, in-order run sees it, or as its flow was decided over the
-- whole capture. The stateful decode runs once per frame, the first time its number comes up and
-- only in increasing order (STATE.last: the last frame decoded so): Wireshark's first pass
-- (pinfo.visited false), which runs `auto` detection over every frame of the capture. What it
-- found is kept in STATE.frames[number]: false when the frame is what a stateless decode gives;
-- the flow's key (a string) for a packet of a flow `auto` had not decided yet; else a table (its
-- profile, what the decoder added, its flow). Every later dissection of the frame (the GUI
-- redrawing it, tshark -2's second pass, ...) is rebuilt from that, with the flow's final
-- profile: a packet decoded std before its flow was decided is labelled with the flow's profile
-- (the decision rule of `auto` over a whole capture), and the detection warning of a flow left
-- undecided goes on the flow's first packet, as `rocescope decode` puts it. In one pass (tshark
-- without -2) there is no later dissection: a packet of a flow not decided when it comes up stays
-- std, marked provisional (fr.provisional: an expert note), and the warning is on the packet that
-- made the flow doubtful. A frame first met out of order decodes without the decoder's memory.
local function decode_frame(link, s, wire_len, number)
    local choice = chosen_profile()
    local kept = STATE.frames[number]
    if kept == nil and number > STATE.last then
        STATE.prev[number] = STATE.last
        STATE.last = number
        local fr = decode_stateful(STATE, link, s, wire_len, choice, number)
        local default = choice == "auto" and "std" or choice
        local undecided = fr.flow and not STATE.flows[fr.flow].profile
        if fr.decode_profile ~= default or fr.nacks or fr.sdr or fr.detection then
            STATE.frames[number] = {profile = fr.decode_profile, nacks = fr.nacks, sdr = fr.sdr,
                detection = fr.detection, appended = fr.appended, flow = undecided and fr.flow or nil}
        elseif undecided then
            STATE.frames[number] = fr.flow
        else
            STATE.frames[number] = false
        end
        return fr
    end
    -- The SDR tracker runs again over the frames in order with their final labels (Decoder::settle
    -- starts it afresh), when they come up in the order of the first pass (tshark -2's second
    -- pass, the GUI refiltering); a frame met out of that order shows what the first pass found.
    -- Once it has reached the last frame of the first pass, what it found is kept for good (a
    -- new in-order run would find the same).
    local prev, again = STATE.prev[number], STATE.final
    local complete = again.last > 0 and again.last == STATE.last
    if prev == 0 and not complete then
        again = {sdr = new_sdr_tracker(), last = 0, ann = {}}
        STATE.final = again
    end
    local in_order = not complete and prev ~= nil and prev == again.last
    if in_order then again.last = number end
    if not kept then return decode(link, s, wire_len, choice == "auto" and "std" or choice, nil, VERIFY) end
    local flow = type(kept) == "string" and kept or kept.flow
    local state = flow and STATE.flows[flow]
    local final = state and state.profile
    local fr
    if type(kept) == "string" then
        fr = decode(link, s, wire_len, final or "std", nil, VERIFY)
    else
        fr = decode(link, s, wire_len, final or kept.profile, nil, VERIFY)
        if kept.nacks then
            fr.nacks, fr.profile = kept.nacks, "erd"
            for _, w in ipairs(kept.appended or {}) do warn(fr, w) end
        end
    end
    if in_order then
        again.ann[number] = sdr_annotate(again.sdr, fr, s)
    elseif again.ann[number] ~= nil or number <= again.last then
        local ann = again.ann[number]
        if ann then
            fr.sdr = ann
            if ann.problem then warn(fr, ann.problem) end
        end
    elseif type(kept) == "table" and kept.sdr then
        fr.sdr = kept.sdr
        if kept.sdr.problem then warn(fr, kept.sdr.problem) end
    end
    -- Over the whole capture a flow left undecided is flagged on its first packet (Decoder::settle,
    -- then give_out), wherever the single pass found it doubtful.
    if state and not final and state.first == number and (state.unsure or doubtful(state)) then
        fr.detection = detection_warning(state)
    end
    return fr
end

-- ---- the one walk over the fields (Frame::visit) ----
-- emit(name, offset, length, value): offset nil for a derived value; value nil to let Wireshark
-- read the bytes (64-bit integers, byte strings).

local function opcode_name(p) return OPS.name[p.op] end -- Opcode::name, whatever the layout

-- Syndrome::from_byte, as generated (AETH_SYNDROME): the kind, the field the low bits are and
-- their value.
local function aeth_kind(syn)
    local a = AETH_SYNDROME[syn]
    return a.kind, a.field, a.value
end


local DCP_HEADERS = {dcpeth = true, sseth = true}

local function visit_roce(fr, p, emit)
    local s, b = fr.s, p.off
    emit("rocescope.profile", nil, 0, fr.profile)
    emit("rocescope.truncated", nil, 0, fr.truncated and 1 or 0)
    local ox, on = hspan(b, "bth", "opcode")
    emit("rocescope.opcode_name", ox, on, opcode_name(p))
    emit_header(s, "bth", b, emit)
    -- The headers present, in wire order (the DCP headers are the extension's to walk).
    for _, h in ipairs(p.info and p.info.hdrs or {}) do
        local name = h[1]
        local o = not DCP_HEADERS[name] and hdr_at(p, name)
        if o then
            emit_header(s, name, o, emit)
            if name == "aeth" then
                local syn = hval(s, o, "aeth", "syndrome")
                local kind, low, value = aeth_kind(syn)
                local x, n = hspan(o, "aeth", "syndrome")
                emit("rocescope.aeth.kind", x, n, kind)
                if low then emit(low, x, n, value) end
                if p.sack_at and p.sack_at + HDR.irn_sack.len <= p.buflen then emit_header(s, "irn_sack", b + p.sack_at, emit) end
            end
        end
    end
    local pay_at = min(p.hdr_end, p.buflen)
    local pay_end = min(p.hdr_end + p.payload_len, p.buflen)
    emit("rocescope.payload_len", b + pay_at, max(pay_end - pay_at, 0), p.payload_len)
    if fr.ext then EXTENSIONS[fr.profile].visit(fr.ext, fr, p, emit) end
    local m = fr.cm_off
    if m then
        local c = L.cm
        local msg = CM_MSGS[rd(s, m, c.attr_id)]
        local mf = c.msgs[msg]
        emit_f(emit, "rocescope.cm.msg", m, c.attr_id, msg)
        emit_f(emit, "rocescope.cm.local_comm_id", m, c.local_comm_id, rd(s, m, c.local_comm_id))
        if mf.remote_comm_id then
            emit_f(emit, "rocescope.cm.remote_comm_id", m, c.remote_comm_id, rd(s, m, c.remote_comm_id))
        end
        if mf.local_qpn then emit_f(emit, "rocescope.cm.local_qpn", m, mf.local_qpn, rd(s, m, mf.local_qpn)) end
        if mf.remote_qpn then emit_f(emit, "rocescope.cm.remote_qpn", m, mf.remote_qpn, rd(s, m, mf.remote_qpn)) end
        if mf.start_psn then emit_f(emit, "rocescope.cm.start_psn", m, mf.start_psn, rd(s, m, mf.start_psn)) end
    end
    if p.icrc_at and p.icrc_at + K.ib.icrc_len <= p.buflen then emit("rocescope.icrc", b + p.icrc_at, K.ib.icrc_len) end
    if fr.icrc then emit("rocescope.icrc.status", nil, 0, fr.icrc) end
end

-- The NACK messages a TCP segment completed (NackBatch::visit): byte ranges clipped to the
-- segment, none for bytes of earlier segments.
local function visit_nacks(b, emit)
    local function clip(from, to)
        local lo, hi = max(from, 0), min(to, b.cap)
        if lo < hi then return b.poff + lo, hi - lo end
        return nil, 0
    end
    local function field(at, f) return clip(at + f.off, at + f.off + f.len) end
    for _, m in ipairs(b.messages) do
        local o, n = field(m.start, NF.count)
        emit("rocescope.erd.nack.count", o, n, m.count)
        for i, e in ipairs(m.entries) do
            local at = m.start + nack_len(i - 1)
            o, n = field(at, NF.src_qpn)
            emit("rocescope.erd.nack.src_qpn", o, n, e[1])
            o, n = field(at, NF.dst_qpn)
            emit("rocescope.erd.nack.dst_qpn", o, n, e[2])
            o, n = field(at, NF.psn)
            emit("rocescope.erd.nack.psn", o, n, e[3])
        end
    end
end

-- Decoded::visit: the frame's fields (Frame::visit), then what the decoder's memory adds.
local function visit(fr, emit)
    if fr.nacks then emit("rocescope.profile", nil, 0, "erd") end
    if fr.lrh then emit_header(fr.s, "lrh", 0, emit) end
    if fr.roce then
        visit_roce(fr, fr.roce, emit)
    elseif fr.lrh and fr.truncated then
        emit("rocescope.truncated", nil, 0, 1)
    end
    if fr.lrh then
        local o, vlen = fr.vcrc_off, K.ib.vcrc_len
        if o and o + vlen <= fr.caplen then emit("rocescope.vcrc", o, vlen) end
        if fr.vcrc then emit("rocescope.vcrc.status", nil, 0, fr.vcrc) end
    end
    local mc = fr.mac_ctrl_off
    if mc then
        emit("rocescope.truncated", nil, 0, fr.truncated and 1 or 0)
        local layout, qlen = K.mac_control.ops[fr.mac_ctrl_op], K.mac_control.quanta_len
        if layout.class_enable then emit_f(emit, "rocescope.pfc.class_enable", mc, layout.class_enable) end
        for _, q in ipairs(layout.quanta) do emit("rocescope.pfc.quanta", mc + q, qlen, READ[qlen](fr.s, mc + q)) end
    end
    if not fr.roce and not mc and not fr.lrh and fr.truncated then emit("rocescope.truncated", nil, 0, 1) end
    for _, w in ipairs(fr.warnings) do emit("rocescope.warning", nil, 0, w) end
    if fr.nwarn > #fr.warnings then
        emit("rocescope.warning", nil, 0, W.not_kept(fr.nwarn - #fr.warnings))
    end
    if fr.nacks then visit_nacks(fr.nacks, emit) end
    local a = fr.sdr
    if a then
        if a.user_imm then emit("rocescope.sdr.user_imm", nil, 0, a.user_imm) end
        emit("rocescope.sdr.va_ok", nil, 0, bool(a.va_ok))
    end
    if fr.detection then emit("rocescope.warning", nil, 0, fr.detection) end
end

-- ---- the tree ----

-- Subtrees: FIELD_GROUP[name] (nil: a frame-level value) and GROUP_LABEL, generated from
-- codec/src/field_group.rs (the browser groups by the same table).

-- The expert note of a packet decoded before its flow was decided (one pass: `auto` labels it
-- std until its flow's profile is known); no registry field says it (the codec has none).
local PROVISIONAL_NOTE = "profile provisional: flow not yet decided"

-- Expert infos: the detection notes are about the capture's flows (a protocol note), the other
-- warnings about the packet (malformed).
local function expert_of(fr, text)
    if text == fr.detection then return PI_PROTOCOL, PI_NOTE end
    return PI_MALFORMED, PI_WARN
end

-- What the registry says about a field the walk adds holds (a mistake here is a Lua error in the
-- tree, which the tests catch): checked when the environment variable ROCESCOPE_LUA_CHECKS is set
-- (pcap-tools/cli/tests/lua_dissector.rs sets it), skipped otherwise (it costs).
local CHECK = os.getenv("ROCESCOPE_LUA_CHECKS") ~= nil
local function check_field(fr, seen, name, value)
    if not F[name] then error("rocescope: field " .. name .. " is not in the registry") end
    if FIELD_KIND[name] == "enum" and not ENUM_VALUES[name][value] then
        error("rocescope: " .. tostring(value) .. " is not a value of " .. name)
    end
    if seen[name] and not REPEATED[name] then error("rocescope: " .. name .. " added twice") end
    if FIELD_PROFILE[name] ~= "std" and FIELD_PROFILE[name] ~= fr.profile then
        error("rocescope: " .. name .. " under profile " .. fr.profile)
    end
    seen[name] = true
end

local GUI = gui_enabled()

-- The frame's rocescope subtree (`tvb`: the whole frame). Skipped when nobody will see it: the
-- tree is not shown (tshark without -V / -T fields / -T pdml ...) and no filter, column or
-- `-e` names a rocescope field.
local function render(fr, tvb, pinfo, tree)
    local caplen = fr.caplen
    local root, groups, seen = nil, {}, CHECK and {} or nil
    visit(fr, function(name, off, len, value)
        local pf = F[name]
        if CHECK then check_field(fr, seen, name, value) end
        if not root then
            local start = (fr.lrh and 0) or fr.roce_off or fr.mac_ctrl_off or (fr.nacks and fr.nacks.poff) or 0
            root = start < caplen and tree:add(proto, tvb(start, caplen - start)) or tree:add(proto)
        end
        -- The bytes a field comes from: where Wireshark reads the value (bytes, 64-bit integers);
        -- for a value rocescope computed, only in the GUI (byte highlighting; tshark shows ranges
        -- only in -T pdml, and making them costs a quarter of the tree's time).
        local range = (value == nil or GUI) and off and len > 0 and off + len <= caplen and tvb(off, len) or nil
        local key = FIELD_GROUP[name]
        local parent = root
        if key then
            local g = groups[key]
            if not g then
                g = {item = range and root:add(range, GROUP_LABEL[key]) or root:add(GROUP_LABEL[key])}
                if range then g.from, g.to = off, off + len end
                groups[key] = g
            elseif range and g.from and off + len > g.to then
                g.to = off + len -- fields of a header come in wire order; the length is set at the end
            end
            parent = g.item
        end
        local item
        if value == nil then
            item = parent:add(pf, range)
        elseif range then
            item = parent:add(pf, range, value)
        else
            item = parent:add(pf, value)
            -- A derived value (no bytes of its own) is shown as generated; one read from the
            -- wire whose range tshark was spared is not.
            if not off then item:set_generated() end
        end
        if name == "rocescope.warning" then
            local group, severity = expert_of(fr, value)
            item:add_expert_info(group, severity, value)
        end
    end)
    for _, g in pairs(groups) do
        if g.from and g.to - g.from > 0 then g.item:set_len(g.to - g.from) end
    end
    if root and fr.provisional then root:add_expert_info(PI_PROTOCOL, PI_NOTE, PROVISIONAL_NOTE) end
end

-- ---- entry points ----

-- Whether the frame read as link type `link` leads where rocescope decodes something: EtherType
-- 0x8915 or 0x8808, UDP port 4791, TCP to or from the NACK port (a quick look, no warnings kept).
local function link_fits(link, s)
    local fr = {link = link, s = s, caplen = #s, wire_len = #s, warnings = {}, nwarn = 0, ncut = 0}
    local ethertype, off = parse_link(fr)
    if not ethertype then return false end
    if ethertype == ETHERTYPE_ROCEV1 or ethertype == ETHERTYPE_MAC_CONTROL then return true end
    local n, proto, l4 = #s, nil, nil
    if ethertype == 0x0800 and n >= off + 20 and rshift(u8(s, off), 4) == 4 then
        proto, l4 = u8(s, off + 9), off + band(u8(s, off), 0x0f) * 4
    elseif ethertype == 0x86dd and n >= off + 40 and rshift(u8(s, off), 4) == 6 then
        proto, l4 = u8(s, off + 6), off + 40
    end
    if not proto or n < l4 + 4 then return false end
    local sport, dport = u16(s, l4), u16(s, l4 + 2)
    if proto == 17 then return sport == ROCEV2_PORT or dport == ROCEV2_PORT end
    if proto == 6 then return sport == PARAMS.erd_nack_port or dport == PARAMS.erd_nack_port end
    return false
end

-- The frame's link type. A Lua dissector is not told it (bar a field extractor, which makes
-- Wireshark build every frame's tree), so it is read from what the link dissectors left in pinfo
-- — Ethernet sets both link addresses, Linux cooked captures only the source, raw IP neither; SLL
-- and SLL2 differ in bytes 2-3 (SLL: the ARPHRD type, SLL2: reserved, zero) — and checked: the
-- first link type, in that order, under which the frame leads where rocescope decodes something.
-- Link addresses may come from a dissector of the payload (infiniband's EoIB, ...): a frame whose
-- addresses say Ethernet may be any link type; one without a destination address is no Ethernet.
local LINK_ORDER = {
    eth = {"eth", "sll", "sll2", "raw"},
    sll = {"sll", "sll2"},
    sll2 = {"sll2", "sll"},
    raw = {"raw"},
}
-- Native InfiniBand (link type 247, or ERF records of type 21, which tshark 4.0 reads it from)
-- has no link addresses, as raw IP. It is told from raw IP by what infiniband left in pinfo — its
-- own network addresses (a LID, a GID), or none but its queue-pair port type when the frame is too
-- short for a LRH — or by the LRH's bytes (LVer 0, PktLen words and the VCRC the packet's length on
-- the wire: a raw packet, LNH 0 or 1, may carry IPv6, whose addresses are then in pinfo) — and by
-- not being RoCE over raw IP or a Linux cooked header without an address (`link_fits`; infiniband
-- gives RoCEv1 GID addresses). Field extractors (frame.encap_type, erf.types.type)
-- would tell the encapsulation directly, but merely registering them makes tshark build a tree for
-- every frame (about 10% more time on plain UDP captures: dissector/README.md, "Benchmark").
local function native_ib(s, pinfo, wire_len)
    local src = tostring(pinfo.src)
    local ib = src:find("^[LG]ID: ") ~= nil or (src == "NONE" and pinfo.port_type == PT_IBQP)
        or (#s >= HDR.lrh.len and hval(s, 0, "lrh", "lver") == 0
            and hval(s, 0, "lrh", "pkt_len") * K.ib.pkt_len_unit + K.ib.vcrc_len == wire_len)
    return ib and not link_fits("raw", s) and not link_fits("sll", s) and not link_fits("sll2", s)
end
local function link_of(s, pinfo, wire_len)
    if tostring(pinfo.dl_dst) == "NONE" and tostring(pinfo.dl_src) == "NONE" and native_ib(s, pinfo, wire_len) then
        return "ib"
    end
    local first
    local v = #s > 0 and rshift(u8(s, 0), 4) or nil
    if tostring(pinfo.dl_dst) ~= "NONE" then
        first = "eth"
    elseif (v == 4 or v == 6) and tostring(pinfo.dl_src) == "NONE" then
        first = "raw"
    elseif #s >= 4 and u16(s, 2) == 0 then
        first = "sll2"
    else
        first = "sll"
    end
    for _, link in ipairs(LINK_ORDER[first]) do
        if link_fits(link, s) then return link end
    end
    return nil
end

-- Whether the frame is rocescope's to show: a RoCE packet (or what the snaplen left of one), a
-- PAUSE / PFC frame, a TCP segment of ERD's NACK port. Other frames (RoCE in a tunnel, in
-- reassembled IP fragments, frames rocescope cannot get past the link header of) get no tree.
local function claims(fr)
    if fr.roce_off or fr.link == "ib" then return true end
    if fr.l3 and (fr.ethertype == ETHERTYPE_ROCEV1 or fr.ethertype == ETHERTYPE_MAC_CONTROL) then return true end
    if fr.tcp_off then
        local t = tcp_segment(fr)
        return t.sport == PARAMS.erd_nack_port or t.dport == PARAMS.erd_nack_port
    end
    return false
end

-- Whether the frame may be one rocescope claims, from what Wireshark's own dissectors left in
-- pinfo (cheap: this runs for every frame): infiniband decoded it (RoCE), UDP port 4791 (RoCE
-- when infiniband is disabled), the NACK port, or no ports at all (PAUSE / PFC, RoCEv1).
local function candidate(pinfo)
    local pt = pinfo.port_type
    if pt == PT_IBQP or pt == PT_NONE then return true end
    if pt == PT_UDP then return pinfo.src_port == ROCEV2_PORT or pinfo.dst_port == ROCEV2_PORT end
    if pt == PT_TCP then
        local port = PARAMS.erd_nack_port
        return pinfo.src_port == port or pinfo.dst_port == port
    end
    return false
end

-- Whether anything will read the rocescope tree of a frame tshark dissects while the tree is not
-- shown (tshark without -V / -T fields / -T pdml ...): a display or read filter, a column, a tap
-- naming a rocescope field. Known once per pass (WANTED[visited]). When nothing will, tshark's
-- frames are not decoded at all: tshark dissects each frame once (twice with -2, where the
-- first pass decodes only for a read filter naming rocescope: `-2 -R "rocescope || !rocescope"`
-- lets that pass run the decoder's memory over the whole file and keeps every frame). The GUI
-- always decodes (it may show any frame later).
local WANTED = {}
local function wanted(tree, visited)
    local w = WANTED[visited]
    if w == nil then
        w = gui_enabled() or tree.visible or tree:referenced(Dissector.get("rocescope"))
        for _, pf in ipairs(FIELD_LIST) do w = w or tree:referenced(pf) end
        WANTED[visited] = w
    end
    return w
end

-- ---- verdicts from `rocescope annotate`'s packet comments (docs/annotate.md) ----
-- `rocescope annotate` writes each frame's analysis fields and replay findings as a pcapng packet
-- comment: a first line ANNOT.marker, then NAME=VALUE lines (a repeated field repeats its line;
-- `\`, line feed and carriage return escaped). They are read here through Wireshark's
-- `frame.comment` field and shown as the fields of the generated ANNOT.F (rocescope.analysis.*,
-- rocescope.replay.*) with expert infos: the plugin parses, it does not analyse. A field extractor
-- makes tshark build every frame's tree (dissector/README.md, "Benchmark"); a Wireshark without
-- `frame.comment` (or a `pkt_comment` holding the text) shows no verdicts (the comments still show).
for _, name in ipairs(ANNOT.comment_fields) do
    local ok, f = pcall(Field.new, name)
    if ok and f then
        ANNOT.extractor = f
        break
    end
end

function ANNOT.unescape_value(v)
    return (string.gsub(v, "\\(.)", function(c) return ANNOT.unescape[c] or ("\\" .. c) end))
end

-- A value as its ProtoField takes it.
function ANNOT.value(kind, v)
    if kind == "uint64" then
        local a = big_parse(v)
        if not a then return nil end
        return UInt64.new(big_halves(a))
    end
    if kind == "uint" or kind == "bool" then return tonumber(v) end
    return v
end

-- The expert info of a finding once its lines are read.
function ANNOT.finding_done(f)
    if not f then return end
    local e = ANNOT.finding_expert[f.kind]
    if e then f.item:add_expert_info(e[1], e[2], string.format(e[3], f.rule or "", f.expected or "", f.seen or "")) end
end

-- Adds one rocescope comment's fields under the rocescope.analysis / rocescope.replay subtrees.
function ANNOT.show_comment(text, tree)
    local subtrees, seen, finding = {}, {}, nil
    for line in string.gmatch(text, "[^\n]+") do
        local name, raw = string.match(line, "^([^=]+)=(.*)$")
        local pf = name and ANNOT.F[name]
        if pf then
            local kind, v = ANNOT.kind[name], ANNOT.unescape_value(raw)
            if CHECK then
                if seen[name] and not ANNOT.repeated[name] then error("rocescope: " .. name .. " added twice") end
                if kind == "enum" and not ANNOT.values[name][v] then error("rocescope: " .. v .. " is not a value of " .. name) end
                seen[name] = true
            end
            local group = ANNOT.group[name]
            local st = subtrees[group]
            if not st then
                st = tree:add(ANNOT.tree[group])
                subtrees[group] = st
            end
            local value = ANNOT.value(kind, v)
            local item
            if value == nil then
                item = st:add(pf)
            else
                item = st:add(pf, value)
            end
            item:set_generated()
            local e = ANNOT.expert[name]
            if e and v ~= "0" then item:add_expert_info(e[1], e[2], e[3]) end
            if name == ANNOT.finding.kind then
                ANNOT.finding_done(finding)
                finding = {item = item, kind = v}
            elseif finding and name == ANNOT.finding.rule then
                finding.rule = v
            elseif finding and name == ANNOT.finding.expected then
                finding.expected = v
            elseif finding and name == ANNOT.finding.seen then
                finding.seen = v
            end
        elseif CHECK and name then
            error("rocescope: " .. name .. " is not a field of the annotation comments")
        end
    end
    ANNOT.finding_done(finding)
end

-- The frame's first rocescope comment (other comments are not rocescope's: left alone).
function ANNOT.show(tree)
    for _, fi in ipairs({ANNOT.extractor()}) do
        local text = fi.value
        if type(text) ~= "string" then return end
        if text == ANNOT.marker or string.sub(text, 1, #ANNOT.marker + 1) == ANNOT.marker .. "\n" then
            ANNOT.show_comment(text, tree)
            return
        end
    end
end

-- rocescope: a post-dissector (see HOW IT HOOKS INTO WIRESHARK); `tvb` is the whole frame.
function proto.dissector(tvb, pinfo, tree)
    local want = wanted(tree, pinfo.visited)
    if want and ANNOT.extractor then ANNOT.show(tree) end
    if not candidate(pinfo) or not want then return 0 end
    local caplen = tvb:len()
    local s = caplen > 0 and tvb:raw(0, caplen) or ""
    local link = link_of(s, pinfo, tvb:reported_len())
    if not link then return 0 end
    local fr = decode_frame(link, s, tvb:reported_len(), pinfo.number)
    if not claims(fr) then return 0 end
    render(fr, tvb, pinfo, tree)
    return caplen
end

-- Called before each dissection of the whole capture (a file opened or reloaded, preferences
-- changed): the decoder's memory starts afresh.
function proto.init()
    STATE = new_state()
    WANTED = {}
end

register_postdissector(proto)
