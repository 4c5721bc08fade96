-- rocescope.lua: Wireshark dissector for RoCEv2 / RoCEv1 (the InfiniBand transport over Ethernet),
-- with the field names of rocescope (shared/spec/INTERFACES.md, "One field vocabulary").
--
-- GENERATED FILE, do not edit. `rocescope dissector > dissector/rocescope.lua` writes it: the part
-- down to "end of the generated part" from the codec (field registry codec/src/field.rs, opcode
-- table codec/src/ib/opcode.rs, CM ids codec/src/ib/cm.rs, profiles and parameter defaults
-- codec/src/profile.rs and params.rs), the rest verbatim from dissector/template.lua.
--
-- Use:  tshark -X lua_script:dissector/rocescope.lua -o rocescope.profile:std -r FILE -T fields -e rocescope.bth.psn
-- or copy this file to ~/.local/lib/wireshark/plugins/. Tested with Wireshark 4.0 (Lua 5.2).

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
field("rocescope.cm.msg", "enum", "std", false, ProtoField.new("Connection Manager message", "rocescope.cm.msg", ftypes.STRING, nil, base.NONE, nil, "Connection Manager message"))
field("rocescope.cm.local_qpn", "uint", "std", false, ProtoField.new("CM sender's QPN", "rocescope.cm.local_qpn", ftypes.UINT24, nil, base.DEC, nil, "CM sender's QPN"))
field("rocescope.cm.remote_qpn", "uint", "std", false, ProtoField.new("CM peer's QPN (DREQ)", "rocescope.cm.remote_qpn", ftypes.UINT24, nil, base.DEC, nil, "CM peer's QPN (DREQ)"))
field("rocescope.cm.start_psn", "uint", "std", false, ProtoField.new("CM starting PSN of the sender's send queue", "rocescope.cm.start_psn", ftypes.UINT24, nil, base.DEC, nil, "CM starting PSN of the sender's send queue"))
field("rocescope.cm.local_comm_id", "uint", "std", false, ProtoField.new("CM sender's communication id", "rocescope.cm.local_comm_id", ftypes.UINT32, nil, base.DEC, nil, "CM sender's communication id"))
field("rocescope.cm.remote_comm_id", "uint", "std", false, ProtoField.new("CM peer's communication id", "rocescope.cm.remote_comm_id", ftypes.UINT32, nil, base.DEC, nil, "CM peer's communication id"))
field("rocescope.pfc.class_enable", "uint", "std", false, ProtoField.new("PFC class-enable vector", "rocescope.pfc.class_enable", ftypes.UINT16, nil, base.DEC, nil, "PFC class-enable vector"))
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
ENUM_VALUES["rocescope.cm.msg"] = {["req"] = true, ["rep"] = true, ["rtu"] = true, ["dreq"] = true, ["drep"] = true, ["rej"] = true, ["mra"] = true}
ENUM_VALUES["rocescope.sdr.ctrl.type"] = {["cts"] = true, ["sr_ack"] = true, ["sr_nack"] = true, ["ec_ack"] = true, ["ec_nack"] = true}
ENUM_VALUES["rocescope.flor.send.type"] = {["data"] = true, ["write_retx"] = true, ["addr_req"] = true, ["addr_resp"] = true}
ENUM_VALUES["rocescope.netrt.type"] = {["request"] = true, ["unfulfilled"] = true}

-- ==== generated: profiles (codec/src/profile.rs) and parameter defaults (codec/src/params.rs) ====
local PROFILE_CHOICES = {"auto", "std", "dcp", "sdr", "flor", "netrt", "erd"}
-- Preference defaults: numbers for uint preferences, strings for the rest ("" = derived).
local PARAM_DEFAULTS = {
    dcp_tag_shift = 2,
    sdr_split = "10,18,4",
    sdr_mtu = "",
    sdr_max_message = "",
    sdr_chunk_packets = 1,
    flor_split = "1,21,10",
    flor_unit_size = 4096,
    flor_ack_set_means = "send",
    netrt_opcode = "0xc0",
    erd_nack_port = 4792,
}

-- ==== generated: extension headers and opcode tables (codec/src/ib/opcode.rs) ====
-- HDR[name] = {len = bytes, layer = name in warnings}
local HDR = {
    rdeth = {len = 4, layer = "RDETH"},
    deth = {len = 8, layer = "DETH"},
    xrceth = {len = 4, layer = "XRCETH"},
    dcpeth = {len = 4, layer = "DCPETH"},
    feth = {len = 4, layer = "FETH"},
    reth = {len = 16, layer = "RETH"},
    atomiceth = {len = 28, layer = "AtomicETH"},
    aeth = {len = 4, layer = "AETH"},
    atomicacketh = {len = 8, layer = "AtomicAckETH"},
    sseth = {len = 4, layer = "SSNETH"},
    immdt = {len = 4, layer = "ImmDt"},
    ieth = {len = 4, layer = "IETH"},
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

-- ==== end of the generated part; what follows is dissector/template.lua ====

-- dissector/template.lua: the hand-written part of dissector/rocescope.lua.
--
-- `rocescope dissector` (pcap-tools/src/lua.rs) prepends the generated tables this file uses:
--   F, FIELD_LIST, FIELD_KIND, FIELD_PROFILE, REPEATED, ENUM_VALUES  the field registry
--   PROFILE_CHOICES, PARAM_DEFAULTS                                  profiles, parameters
--   HDR, OPCODES                                                     headers, opcode tables
--   CM_MSGS                                                          CM attribute ids
-- so this file never spells a field's type or description, an opcode's headers or a default.
-- Edit this file, then regenerate: cargo run -p rocescope -- dissector > dissector/rocescope.lua
--
-- HOW IT HOOKS INTO WIRESHARK
-- The protocol `rocescope` is a post-dissector: it sees every frame, whatever Wireshark made of
-- it, and decodes it from the link header on exactly as the codec's `Frame::parse` does
-- (codec/src/frame.rs): Ethernet / Linux cooked v1 / v2 / raw IP, up to two VLAN tags,
-- IPv4 / IPv6, UDP port 4791 on either side (RoCEv2), EtherType 0x8915 (RoCEv1 GRH), EtherType
-- 0x8808 (PAUSE / PFC). It then adds the fields in the order of `Frame::visit`. Decoding the raw
-- frame (rather than the UDP payload Wireshark hands over) is what makes `tshark -T fields` print
-- what `rocescope decode --format fields` prints for every frame, RoCE or not: lengths come from
-- the IP / UDP / GRH headers as the codec reads them, snaplen-cut frames are flagged the same
-- way, and the same warnings appear (IPv4 checksum, IP/UDP lengths, VLAN depth, ...).
-- With the preference `rocescope.replace_infiniband` (default on) the protocol also takes UDP
-- port 4791 and EtherType 0x8915 away from Wireshark's built-in `infiniband` dissector, whose tree
-- and heuristic payload dissectors (rpcordma, iser, smb_direct, ...) then no longer run; there it
-- only claims the bytes, the post-dissector adds the tree (RoCE it does not decode itself, e.g.
-- inside a VXLAN or ERSPAN tunnel, still goes to infiniband). Turn it off to see both dissections.
--
-- PROFILES
-- The preference `rocescope.profile` takes auto std dcp sdr flor netrt erd. Only std is
-- implemented so far: every other choice, and auto, decodes as std (rocescope.profile = "std").
-- An extension plugs in through EXTENSIONS below (layout of the bytes after the BTH, its own
-- fields), mirroring codec/src/ext/mod.rs; `auto` will need per-flow detection state kept on the
-- first pass (pinfo.visited) as codec/src/decoder.rs keeps it.
-- The parameter preferences of INTERFACES.md are declared with underscores where the command
-- line has hyphens (Wireshark allows only [a-z0-9_.] in preference names):
-- rocescope.dcp_tag_shift, .sdr_split, .sdr_mtu, .sdr_max_message, .sdr_chunk_packets,
-- .flor_split, .flor_unit_size, .flor_ack_set_means, .netrt_opcode, .erd_nack_port.

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

local proto = Proto("rocescope", "RoCE (rocescope)")
proto.fields = FIELD_LIST

-- ---- preferences ----

local function enum_table(names)
    local t = {}
    for i, name in ipairs(names) do
        t[i] = {i, name, i}
    end
    return t
end

proto.prefs.profile = Pref.enum("Profile", 1,
    "Transport profile: auto (detect per flow), std, dcp, sdr, flor, netrt, erd. "
        .. "Only std is implemented in this version: the others, and auto, decode as std.",
    enum_table(PROFILE_CHOICES), false)
proto.prefs.replace_infiniband = Pref.bool("Replace the infiniband dissector", true,
    "Take UDP port 4791 and EtherType 0x8915 from Wireshark's infiniband dissector. rocescope "
        .. "decodes every frame as a post-dissector either way.")
local P = PARAM_DEFAULTS
proto.prefs.dcp_tag_shift = Pref.uint("DCP tag shift", P.dcp_tag_shift,
    "DCP: the tag is (ToS >> shift) & 3 (--dcp-tag-shift)")
proto.prefs.sdr_split = Pref.string("SDR immediate split", P.sdr_split,
    "SDR: message id, packet offset and fragment bits of the immediate, adding up to 32 (--sdr-split)")
proto.prefs.sdr_mtu = Pref.string("SDR MTU", P.sdr_mtu,
    "SDR MTU in bytes; empty: the DMA length of the flow's full-size packets, else 4096 (--sdr-mtu)")
proto.prefs.sdr_max_message = Pref.string("SDR maximum message", P.sdr_max_message,
    "SDR maximum message size in bytes; empty: 2^OFF x MTU (--sdr-max-message)")
proto.prefs.sdr_chunk_packets = Pref.uint("SDR packets per chunk", P.sdr_chunk_packets,
    "SDR packets per chunk (--sdr-chunk-packets)")
proto.prefs.flor_split = Pref.string("Flor immediate split", P.flor_split,
    "Flor: hint, message id and chunk offset bits of the immediate, adding up to 32 (--flor-split)")
proto.prefs.flor_unit_size = Pref.uint("Flor UNIT_SIZE", P.flor_unit_size,
    "Flor UNIT_SIZE in bytes (--flor-unit-size)")
local ACK_MEANS = {"send", "write"}
local ack_default = 1
for i, v in ipairs(ACK_MEANS) do
    if v == P.flor_ack_set_means then ack_default = i end
end
proto.prefs.flor_ack_set_means = Pref.enum("Flor ACK set bit means", ack_default,
    "Flor ACK bitmap: what a set bit marks (--flor-ack-set-means)", enum_table(ACK_MEANS), false)
proto.prefs.netrt_opcode = Pref.string("NetRT opcode", P.netrt_opcode,
    "NetRT message BTH OpCode, decimal or 0x hex (--netrt-opcode)")
proto.prefs.erd_nack_port = Pref.uint("ERD NACK port", P.erd_nack_port,
    "ERD NACK TCP port (--erd-nack-port)")

-- "10,18,4" -> {10, 18, 4} when the three widths add up to 32 (params.rs ImmSplit::parse).
local function parse_split(s)
    local a, b, c = string.match(s or "", "^%s*(%d+)%s*,%s*(%d+)%s*,%s*(%d+)%s*$")
    a, b, c = tonumber(a), tonumber(b), tonumber(c)
    if a and a + b + c == 32 then return {a, b, c} end
    return nil
end

local function parse_number(s)
    s = s or ""
    local h = string.match(s, "^0[xX](%x+)$")
    if h then return tonumber(h, 16) end
    if string.match(s, "^%d+$") then return tonumber(s) end
    return nil
end

-- The transports' parameters (codec/src/params.rs Params), from the preferences. A malformed
-- value is reported once and its default used.
local function read_params()
    local p, bad = {}, {}
    local prefs = proto.prefs
    p.dcp_tag_shift = prefs.dcp_tag_shift
    p.sdr_split = parse_split(prefs.sdr_split) or parse_split(P.sdr_split)
    if not parse_split(prefs.sdr_split) then bad[#bad + 1] = "sdr_split" end
    p.sdr_mtu = prefs.sdr_mtu ~= "" and parse_number(prefs.sdr_mtu) or nil
    if prefs.sdr_mtu ~= "" and not p.sdr_mtu then bad[#bad + 1] = "sdr_mtu" end
    p.sdr_max_message = prefs.sdr_max_message ~= "" and parse_number(prefs.sdr_max_message) or nil
    if prefs.sdr_max_message ~= "" and not p.sdr_max_message then bad[#bad + 1] = "sdr_max_message" end
    p.sdr_chunk_packets = prefs.sdr_chunk_packets
    p.flor_split = parse_split(prefs.flor_split) or parse_split(P.flor_split)
    if not parse_split(prefs.flor_split) then bad[#bad + 1] = "flor_split" end
    p.flor_unit_size = prefs.flor_unit_size
    p.flor_ack_set_means = ACK_MEANS[prefs.flor_ack_set_means] or P.flor_ack_set_means
    local op = parse_number(prefs.netrt_opcode)
    if not op or op > 255 then
        bad[#bad + 1] = "netrt_opcode"
        op = parse_number(P.netrt_opcode)
    end
    p.netrt_opcode = op
    p.erd_nack_port = prefs.erd_nack_port
    return p, bad
end

local PARAMS = read_params()

-- ---- extensions (WIRE.md part B) ----
-- EXTENSIONS[profile] = {
--     layout = function(ctx, opcode) -> a key of OPCODES (e.g. "dcp_data"), or "dcp_ho" /
--              "ext_body" once implemented, or nil for std,
--     parse  = function(ctx, fr, pkt) -> a value describing what the packet carries, or nil when
--              the profile does not apply to this packet (it is then plain std),
--     visit  = function(ext, fr, pkt, emit) adding the extension's fields (Ext::visit),
-- }
-- with ctx = {tos = ToS / traffic class or nil for RoCEv1, params = PARAMS}. None is
-- implemented yet: every profile decodes as std.
local EXTENSIONS = {}

-- The profile packets are decoded with (the preference; unimplemented ones and auto fall back
-- to std).
local function chosen_profile()
    local name = PROFILE_CHOICES[proto.prefs.profile] or "auto"
    if EXTENSIONS[name] then return name end
    return "std"
end

-- ---- taking the port from the infiniband dissector ----

local udp_table = DissectorTable.get("udp.port")
local ethertype_table = DissectorTable.get("ethertype")
local ROCEV2_PORT, ETHERTYPE_ROCEV1 = 4791, 0x8915
local original = {
    udp = udp_table:get_dissector(ROCEV2_PORT),
    ethertype = ethertype_table:get_dissector(ETHERTYPE_ROCEV1),
}
local function apply_takeover()
    if proto.prefs.replace_infiniband then
        udp_table:add(ROCEV2_PORT, proto)
        ethertype_table:add(ETHERTYPE_ROCEV1, proto)
    else
        udp_table:remove(ROCEV2_PORT, proto)
        ethertype_table:remove(ETHERTYPE_ROCEV1, proto)
        if original.udp then udp_table:add(ROCEV2_PORT, original.udp) end
        if original.ethertype then ethertype_table:add(ETHERTYPE_ROCEV1, original.ethertype) end
    end
end

function proto.prefs_changed()
    local bad
    PARAMS, bad = read_params()
    if #bad > 0 then
        report_failure("rocescope: invalid preference value for " .. table.concat(bad, ", ") .. "; using the default")
    end
    apply_takeover()
end

-- ---- warnings: the texts of codec/src/warning.rs ----

local MAX_WARNINGS = 6 -- Warnings::CAPACITY: further ones are counted, not listed

local LAYER = { -- Layer::name
    link = "link header", vlan = "VLAN tag", ipv4 = "IPv4 header", ipv6 = "IPv6 header",
    grh = "GRH", udp = "UDP header", tcp = "TCP header", bth = "BTH", icrc = "ICRC", cnp = "CNP reserved bytes",
    cm = "CM MAD", pfc = "MAC control frame",
}

local function u16c(v) return v % 65536 end -- the codec stores these as u16

local W = {}
function W.truncated(layer, need, have)
    return sfmt("truncated in %s: %d of %d bytes captured", layer, u16c(have), u16c(need))
end
function W.beyond_frame(layer, claimed, available)
    return sfmt("%s length %d exceeds the %d bytes in the frame", layer, claimed, available)
end
function W.too_short(layer, claimed, minimum)
    return sfmt("%s length %d is below the minimum %d", layer, claimed, minimum)
end
function W.ip_udp_mismatch(ip_payload, udp)
    return sfmt("IP payload length %d and UDP length %d disagree", u16c(ip_payload), udp)
end
function W.unknown_opcode(op) return sfmt("unknown opcode 0x%02x: payload left opaque", op) end
W.cnp_0x80 = "opcode 0x80 read as CNP (hardware sends 0x81)"
function W.pad_too_large(pad, avail)
    return sfmt("PadCnt %d exceeds the %d bytes after the headers", pad, u16c(avail))
end
function W.pad_no_payload(pad) return sfmt("PadCnt %d on an opcode that carries no payload", pad) end
function W.unexpected_payload(len)
    return sfmt("%d payload bytes on an opcode that carries no payload", math.min(len, 65535))
end
function W.atomic_write_length(len) return sfmt("ATOMIC WRITE carries %d payload bytes instead of 8", u16c(len)) end
function W.tver(v) return sfmt("BTH TVer %d (expected 0)", v) end
function W.aeth_reserved(s) return sfmt("AETH syndrome 0x%02x uses a reserved pattern", s) end
function W.icrc_mismatch(wire, computed) return sfmt("ICRC mismatch: wire %08x, computed %08x", wire, computed) end
function W.ipv4_checksum(wire, computed)
    return sfmt("IPv4 header checksum 0x%04x, expected 0x%04x", wire, computed)
end
function W.cm_attribute(a) return sfmt("CM MAD attribute 0x%04x not decoded", a) end
function W.mac_control_opcode(op) return sfmt("MAC control opcode 0x%04x not decoded", op) end
W.vlan_depth = "not decoded: more than two VLAN tags"
W.ipv4_fragment = "not decoded: IPv4 fragment"
W.ipv6_ext = "not decoded: IPv6 extension headers"
W.grh_next_header = "not decoded: GRH next header is not the IBA transport"

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

-- IcrcNet + icrc::compute: returns the value whose little-endian bytes are on the wire.
local function icrc_compute(fr, p)
    local s, net = fr.s, fr.net
    local crc = 0xffffffff
    for _ = 1, 8 do crc = crc_byte(crc, 0xff) end
    local o = net.off
    if net.kind == "ipv4" then
        crc = crc_masked(crc, s, o, net.hdr_len, {[1] = 0xff, [8] = 0xff, [10] = 0xff, [11] = 0xff})
        crc = crc_masked(crc, s, o + net.hdr_len, 8, {[6] = 0xff, [7] = 0xff})
    else -- ipv6, grh
        crc = crc_masked(crc, s, o, 40, {[0] = bor(u8(s, o), 0x0f), [1] = 0xff, [2] = 0xff, [3] = 0xff, [7] = 0xff})
        if net.kind == "ipv6" then
            crc = crc_masked(crc, s, o + 40, 8, {[6] = 0xff, [7] = 0xff})
        end
    end
    crc = crc_masked(crc, s, p.off, 12, {[4] = 0xff})
    crc = crc_range(crc, s, p.off + 12, p.off + p.icrc_at)
    return bxor(crc, 0xffffffff)
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

local function warn(fr, text)
    if #fr.warnings < MAX_WARNINGS then fr.warnings[#fr.warnings + 1] = text end
end

local function short(fr, layer, need, have)
    fr.truncated = true
    warn(fr, W.truncated(layer, need, have))
    return nil
end

-- RocePacket::parse_with: where each header, the payload and the ICRC are. `off` is the BTH's
-- offset in the frame, `wire_len` the packet's length on the wire (BTH .. ICRC).
local function parse_packet(fr, off, wire_len, layout)
    local s = fr.s
    local buflen = math.min(math.max(fr.caplen - off, 0), wire_len)
    if wire_len < 12 then warn(fr, W.too_short(LAYER.bth, wire_len, 12)) end
    if buflen < 12 then
        if wire_len >= 12 then warn(fr, W.truncated(LAYER.bth, 12, buflen)) end
        return nil
    end
    local op = u8(s, off)
    local info = OPCODES[layout][op]
    local p = {off = off, buflen = buflen, wire_len = wire_len, op = op, info = info, present = {},
        hdr_end = 12, payload_len = 0}
    local tver = band(u8(s, off + 1), 0x0f)
    if tver ~= 0 then warn(fr, W.tver(tver)) end
    local body_end
    if wire_len >= 16 then
        p.icrc_at, body_end = wire_len - 4, wire_len - 4
    else
        warn(fr, W.too_short(LAYER.icrc, wire_len, 16))
        body_end = wire_len
    end
    if not info then warn(fr, W.unknown_opcode(op)) end
    if op == 0x80 then warn(fr, W.cnp_0x80) end
    local at = 12
    if info then
        if at + info.hdrs_len <= body_end then
            for _, h in ipairs(info.hdrs) do p.present[h[1]] = h[2] end
            at = at + info.hdrs_len
        else
            for _, h in ipairs(info.hdrs) do
                local len = HDR[h[1]].len
                if at + len > body_end then
                    warn(fr, W.too_short(HDR[h[1]].layer, math.max(body_end - at, 0), len))
                    p.hdr_end = math.max(body_end, at)
                    return p
                end
                p.present[h[1]] = h[2]
                at = at + len
            end
        end
    end
    local avail = math.max(body_end - at, 0)
    local pad = band(rshift(u8(s, off + 1), 4), 3)
    if not info then
        p.hdr_end, p.payload_len = at, avail
        return p
    end
    if info.cnp then
        if avail ~= 16 then warn(fr, W.too_short(LAYER.cnp, avail, 16)) end
        p.hdr_end = at + math.min(avail, 16)
        p.payload_len = math.max(avail - 16, 0)
        if pad ~= 0 then warn(fr, W.pad_no_payload(pad)) end
        return p
    end
    -- IRN's selective NAK: an Acknowledge with 4 bytes after the AETH whose syndrome (when
    -- captured) is NAK code 0.
    if op == 0x11 and avail == 4 then
        local a = p.present.aeth
        local syn = a and a < buflen and u8(s, off + a) or nil
        if syn == nil or syn == 0x60 then
            p.sack_at = at
            at = at + 4
        end
    end
    avail = math.max(body_end - at, 0)
    p.hdr_end = at
    if info.payload then
        if pad > avail then
            warn(fr, W.pad_too_large(pad, avail))
            p.payload_len = avail
        else
            p.payload_len = avail - pad
        end
        if band(op, 0x1f) == 0x1d and p.payload_len ~= 8 and rshift(op, 5) == 0 then
            warn(fr, W.atomic_write_length(p.payload_len))
        end
    else
        if pad ~= 0 then warn(fr, W.pad_no_payload(pad)) end
        if avail > 0 then warn(fr, W.unexpected_payload(avail)) end
        p.payload_len = avail
    end
    local a = p.present.aeth
    if a and a + 4 <= buflen then
        local syn = u8(s, off + a)
        if band(syn, 0x80) ~= 0 or band(rshift(syn, 5), 3) == 2 then warn(fr, W.aeth_reserved(syn)) end
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
local CM_NEED = {req = 71, rep = 47} -- start PSN / local QPN end; others: header + 12
local function parse_cm(fr, p)
    local s = fr.s
    local start = p.off + p.hdr_end
    local len = math.max(math.min(p.hdr_end + p.payload_len, p.buflen) - math.min(p.hdr_end, p.buflen), 0)
    local err
    if len < 24 then
        err = len
    elseif u8(s, start + 1) ~= 0x07 then
        return
    else
        local attr = u16(s, start + 16)
        local msg = CM_MSGS[attr]
        if not msg then
            warn(fr, W.cm_attribute(attr))
            return
        end
        if len < (CM_NEED[msg] or 36) then err = len end
    end
    if err then
        if len == p.payload_len then warn(fr, W.too_short(LAYER.cm, err, 72)) end
        return
    end
    fr.cm_off = start
end

-- The IPv4 ToS / IPv6 traffic class (Frame::tos); nil for RoCEv1, as extensions see it.
local function ctx_tos(fr)
    local net, s = fr.net, fr.s
    if net.kind == "ipv4" then return u8(s, net.off + 1) end
    if net.kind == "ipv6" then return band(u8(s, net.off) * 16 + rshift(u8(s, net.off + 1), 4), 0xff) end
    return nil
end

local function parse_roce(fr, off, wire_len)
    fr.roce_off = off
    local profile = chosen_profile()
    local ext, ctx = EXTENSIONS[profile], nil
    local layout = "std"
    if ext and off < fr.caplen then
        ctx = {tos = ctx_tos(fr), params = PARAMS}
        layout = ext.layout(ctx, u8(fr.s, off)) or "std"
    end
    local p = parse_packet(fr, off, wire_len, layout)
    if not p then
        if math.max(fr.caplen - off, 0) < wire_len then fr.truncated = true end
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
    elseif p.icrc_at + 4 <= p.buflen then
        local s, o = fr.s, off + p.icrc_at
        local wire = u8(s, o) + u8(s, o + 1) * 0x100 + u8(s, o + 2) * 0x10000 + u8(s, o + 3) * 0x1000000
        local computed = icrc_compute(fr, p)
        if wire == computed then
            fr.icrc = "good"
        else
            warn(fr, W.icrc_mismatch(wire, computed))
            fr.icrc = "bad"
        end
    else
        fr.icrc = "truncated"
    end
    if p.op == 0x64 and u24(fr.s, off + 5) == 1 then parse_cm(fr, p) end
end

-- Frame::parse_tcp: only the header's length is checked (ERD's NACK stream, which needs the
-- segments, is decoded under the erd profile). `seg_len` is the IP payload length on the wire.
local function parse_tcp(fr, off, seg_len)
    local have = math.max(math.min(off + seg_len, fr.caplen) - math.min(off, fr.caplen), 0)
    local need = 20
    if have >= 20 then
        local hl = rshift(band(u8(fr.s, off + 12), 0xf0), 2)
        if hl < 20 then
            warn(fr, W.too_short(LAYER.tcp, hl, 20))
            return
        end
        if have >= hl then
            fr.tcp_off = off
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
        local need = math.max(ihl * 4, 20)
        if have < need then
            fr.truncated = true
            warn(fr, W.truncated(LAYER.ipv4, need, have))
            return
        end
        if ihl < 5 then
            warn(fr, W.too_short(LAYER.ipv4, u16(s, l3 + 2), need))
            return
        end
        local flags = u16(s, l3 + 6)
        if band(flags, 0x2000) ~= 0 or band(flags, 0x1fff) ~= 0 then
            warn(fr, W.ipv4_fragment)
            return
        end
        hdr_len = ihl * 4
        local wire_sum, computed = u16(s, l3 + 10), ipv4_checksum(s, l3, hdr_len)
        if wire_sum ~= computed then warn(fr, W.ipv4_checksum(wire_sum, computed)) end
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
    if ipproto == 6 then return parse_tcp(fr, l3 + hdr_len, math.max(ip_len - hdr_len, 0)) end
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
    local ip_payload = math.max(ip_len - hdr_len, 0)
    local udp_len = u16(s, udp + 4)
    local roce_len = math.max(udp_len - 8, 0)
    if udp_len < 8 then
        warn(fr, W.too_short(LAYER.udp, udp_len, 8))
    elseif udp_len ~= ip_payload then
        warn(fr, W.ip_udp_mismatch(ip_payload, udp_len))
        roce_len = math.min(roce_len, math.max(ip_payload - 8, 0))
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

-- mac_control.rs: PAUSE (opcode 1: one pause time), PFC (0x0101: class-enable vector, eight).
local MAC_CONTROL_NEED = {[0x0001] = 4, [0x0101] = 20}
local function parse_mac_control(fr, off)
    local have = fr.caplen - off
    if have < 2 then
        fr.truncated = true
        warn(fr, W.truncated(LAYER.pfc, 2, have))
        return
    end
    local op = u16(fr.s, off)
    local need = MAC_CONTROL_NEED[op]
    if not need then
        warn(fr, W.mac_control_opcode(op))
    elseif have < need then
        fr.truncated = true
        warn(fr, W.truncated(LAYER.pfc, need, have))
    else
        fr.mac_ctrl_off, fr.mac_ctrl_op = off, op
    end
end

-- Frame::parse_link: the EtherType after any VLAN tags and the offset of what follows.
local function parse_link(fr)
    local s, n = fr.s, fr.caplen
    local ethertype, off
    if fr.link == "eth" then
        if n < 14 then return short(fr, LAYER.link, 14, n) end
        ethertype, off = u16(s, 12), 14
    elseif fr.link == "sll" then
        if n < 16 then return short(fr, LAYER.link, 16, n) end
        ethertype, off = u16(s, 14), 16
    elseif fr.link == "sll2" then
        if n < 20 then return short(fr, LAYER.link, 20, n) end
        ethertype, off = u16(s, 0), 20
    else -- raw IP
        if n < 1 then return short(fr, LAYER.link, 1, 0) end
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
        if n - off < 4 then return short(fr, LAYER.vlan, 4, n - off) end
        vlans = vlans + 1
        ethertype, off = u16(s, off + 2), off + 4
    end
    return ethertype, off
end

-- Frame::decode. `s` holds the captured bytes, `wire_len` the frame's length on the wire.
local function decode(link, s, wire_len)
    local fr = {link = link, s = s, caplen = #s, wire_len = math.max(wire_len, #s), warnings = {},
        truncated = false, profile = "std"}
    local ethertype, l3 = parse_link(fr)
    if not ethertype then
        fr.truncated = fr.caplen < fr.wire_len
        return fr
    end
    if ethertype == 0x0800 or ethertype == 0x86dd then
        parse_ip(fr, l3)
    elseif ethertype == ETHERTYPE_ROCEV1 then
        parse_grh(fr, l3)
    elseif ethertype == 0x8808 then
        parse_mac_control(fr, l3)
    else
        fr.truncated = fr.caplen < fr.wire_len
    end
    return fr
end

-- ---- the one walk over the fields (Frame::visit) ----
-- emit(name, offset, length, value): offset nil for a derived value; value nil to let Wireshark
-- read the bytes (64-bit integers, byte strings).

local function opcode_name(p)
    if p.info then return p.info.name end
    if p.op >= 0xc0 then return "Vendor-specific" end
    return "Unknown"
end

local function aeth_kind(syn)
    if band(syn, 0x80) ~= 0 then return "reserved" end
    local k = band(rshift(syn, 5), 3)
    if k == 0 then return "ack", "rocescope.aeth.credit" end
    if k == 1 then return "rnr_nak", "rocescope.aeth.rnr_timer" end
    if k == 3 then return "nak", "rocescope.aeth.nak_code" end
    return "reserved"
end

local function bit(v, mask) return band(v, mask) ~= 0 and 1 or 0 end

local function visit_roce(fr, p, emit)
    local s, b = fr.s, p.off
    emit("rocescope.profile", nil, 0, fr.profile)
    emit("rocescope.truncated", nil, 0, fr.truncated and 1 or 0)
    emit("rocescope.opcode_name", b, 1, opcode_name(p))
    local flags, byte4 = u8(s, b + 1), u8(s, b + 4)
    emit("rocescope.bth.opcode", b, 1, p.op)
    emit("rocescope.bth.se", b + 1, 1, bit(flags, 0x80))
    emit("rocescope.bth.m", b + 1, 1, bit(flags, 0x40))
    emit("rocescope.bth.padcnt", b + 1, 1, band(rshift(flags, 4), 3))
    emit("rocescope.bth.tver", b + 1, 1, band(flags, 0x0f))
    emit("rocescope.bth.p_key", b + 2, 2, u16(s, b + 2))
    emit("rocescope.bth.fecn", b + 4, 1, bit(byte4, 0x80))
    emit("rocescope.bth.becn", b + 4, 1, bit(byte4, 0x40))
    emit("rocescope.bth.destqp", b + 5, 3, u24(s, b + 5))
    emit("rocescope.bth.a", b + 8, 1, bit(u8(s, b + 8), 0x80))
    emit("rocescope.bth.psn", b + 9, 3, u24(s, b + 9))
    local o = hdr_at(p, "rdeth")
    if o then emit("rocescope.rdeth.eecnxt", o + 1, 3, u24(s, o + 1)) end
    o = hdr_at(p, "deth")
    if o then
        emit("rocescope.deth.q_key", o, 4, u32(s, o))
        emit("rocescope.deth.srcqp", o + 5, 3, u24(s, o + 5))
    end
    o = hdr_at(p, "xrceth")
    if o then emit("rocescope.xrceth.xrcsrq", o + 1, 3, u24(s, o + 1)) end
    o = hdr_at(p, "feth")
    if o then
        emit("rocescope.feth.sel", o + 3, 1, band(rshift(u8(s, o + 3), 4), 3))
        emit("rocescope.feth.plt", o + 3, 1, band(u8(s, o + 3), 0x0f))
    end
    o = hdr_at(p, "reth")
    if o then
        emit("rocescope.reth.va", o, 8)
        emit("rocescope.reth.r_key", o + 8, 4, u32(s, o + 8))
        emit("rocescope.reth.dmalen", o + 12, 4, u32(s, o + 12))
    end
    o = hdr_at(p, "atomiceth")
    if o then
        emit("rocescope.atomiceth.va", o, 8)
        emit("rocescope.atomiceth.r_key", o + 8, 4, u32(s, o + 8))
        emit("rocescope.atomiceth.swapdt", o + 12, 8)
        emit("rocescope.atomiceth.cmpdt", o + 20, 8)
    end
    o = hdr_at(p, "aeth")
    if o then
        local syn = u8(s, o)
        emit("rocescope.aeth.syndrome", o, 1, syn)
        emit("rocescope.aeth.msn", o + 1, 3, u24(s, o + 1))
        local kind, low = aeth_kind(syn)
        emit("rocescope.aeth.kind", o, 1, kind)
        if low then emit(low, o, 1, band(syn, 0x1f)) end
    end
    if p.sack_at and p.sack_at + 4 <= p.buflen then
        emit("rocescope.irn.sack_psn", b + p.sack_at + 1, 3, u24(s, b + p.sack_at + 1))
    end
    o = hdr_at(p, "atomicacketh")
    if o then emit("rocescope.atomicacketh.origremdt", o, 8) end
    o = hdr_at(p, "immdt")
    if o then emit("rocescope.immdt", o, 4, u32(s, o)) end
    o = hdr_at(p, "ieth")
    if o then emit("rocescope.ieth.r_key", o, 4, u32(s, o)) end
    local pay_at = math.min(p.hdr_end, p.buflen)
    local pay_end = math.min(p.hdr_end + p.payload_len, p.buflen)
    emit("rocescope.payload_len", b + pay_at, math.max(pay_end - pay_at, 0), p.payload_len)
    if fr.ext then EXTENSIONS[fr.profile].visit(fr.ext, fr, p, emit) end
    local m = fr.cm_off
    if m then
        local msg = CM_MSGS[u16(s, m + 16)]
        emit("rocescope.cm.msg", m + 16, 2, msg)
        emit("rocescope.cm.local_comm_id", m + 24, 4, u32(s, m + 24))
        if msg ~= "req" then emit("rocescope.cm.remote_comm_id", m + 28, 4, u32(s, m + 28)) end
        local lq = (msg == "req" and 56) or (msg == "rep" and 36) or nil
        if lq then emit("rocescope.cm.local_qpn", m + lq, 3, u24(s, m + lq)) end
        if msg == "dreq" then emit("rocescope.cm.remote_qpn", m + 32, 3, u24(s, m + 32)) end
        local sp = (msg == "req" and 68) or (msg == "rep" and 44) or nil
        if sp then emit("rocescope.cm.start_psn", m + sp, 3, u24(s, m + sp)) end
    end
    if p.icrc_at and p.icrc_at + 4 <= p.buflen then emit("rocescope.icrc", b + p.icrc_at, 4) end
    if fr.icrc then emit("rocescope.icrc.status", nil, 0, fr.icrc) end
end

local function visit(fr, emit)
    if fr.roce then visit_roce(fr, fr.roce, emit) end
    local mc = fr.mac_ctrl_off
    if mc then
        emit("rocescope.truncated", nil, 0, fr.truncated and 1 or 0)
        if fr.mac_ctrl_op == 0x0101 then
            emit("rocescope.pfc.class_enable", mc + 2, 2, u16(fr.s, mc + 2))
            for i = 0, 7 do emit("rocescope.pfc.quanta", mc + 4 + 2 * i, 2, u16(fr.s, mc + 4 + 2 * i)) end
        else
            emit("rocescope.pfc.quanta", mc + 2, 2, u16(fr.s, mc + 2))
        end
    end
    if not fr.roce and not mc and fr.truncated then emit("rocescope.truncated", nil, 0, 1) end
    for _, w in ipairs(fr.warnings) do emit("rocescope.warning", nil, 0, w) end
end

-- ---- the tree ----

-- Subtree labels by the second component of a field's name (rocescope.bth.psn -> BTH).
local GROUP_LABEL = {
    bth = "Base Transport Header (BTH)", rdeth = "RDETH", deth = "DETH", xrceth = "XRCETH",
    reth = "RETH", atomiceth = "AtomicETH", aeth = "AETH", irn = "IRN selective NAK",
    atomicacketh = "AtomicAckETH", ieth = "IETH", feth = "FETH", icrc = "Invariant CRC",
    cm = "Connection Manager MAD", pfc = "PAUSE / PFC",
}
local FRAME_LEVEL = {profile = true, truncated = true, opcode_name = true, payload_len = true,
    warning = true, immdt = true}

local function render(fr, tvb, pinfo, tree)
    local items = {}
    visit(fr, function(name, off, len, value)
        items[#items + 1] = {name, off, len, value}
    end)
    if #items == 0 then return end
    local start = fr.roce_off or fr.mac_ctrl_off or 0
    local caplen = fr.caplen
    local root
    if start < caplen then
        root = tree:add(proto, tvb(start, caplen - start))
    else
        root = tree:add(proto)
    end
    local groups, seen = {}, {}
    for _, it in ipairs(items) do
        local name, off, len, value = it[1], it[2], it[3], it[4]
        -- What the registry says about the field holds (a mistake here is a Lua error in the tree,
        -- which the tests catch).
        local pf = F[name]
        if not pf then error("rocescope: field " .. name .. " is not in the registry") end
        if FIELD_KIND[name] == "enum" and not ENUM_VALUES[name][value] then
            error("rocescope: " .. tostring(value) .. " is not a value of " .. name)
        end
        if seen[name] and not REPEATED[name] then error("rocescope: " .. name .. " added twice") end
        if FIELD_PROFILE[name] ~= "std" and FIELD_PROFILE[name] ~= fr.profile then
            error("rocescope: " .. name .. " under profile " .. fr.profile)
        end
        seen[name] = true
        local range = off and len > 0 and off + len <= caplen and tvb(off, len) or nil
        local key = string.match(name, "^rocescope%.([%w_]+)")
        local parent = root
        if not FRAME_LEVEL[key] then
            local g = groups[key]
            if not g then
                local label = GROUP_LABEL[key] or string.upper(key)
                g = {item = range and root:add(range, label) or root:add(label)}
                if range then g.from, g.to = off, off + len end
                groups[key] = g
            elseif range and g.from then
                g.to = math.max(g.to, off + len) -- fields of a header come in wire order
                g.item:set_len(g.to - g.from)
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
            item:set_generated()
        end
        if name == "rocescope.warning" then item:add_expert_info(PI_MALFORMED, PI_WARN, value) end
    end
    local p = fr.roce
    if p then
        local s = fr.s
        pinfo.cols.protocol:set(fr.net and fr.net.kind == "grh" and "RoCEv1" or "RoCEv2")
        local info = sfmt("%s QP=%d PSN=%d", opcode_name(p), u24(s, p.off + 5), u24(s, p.off + 9))
        if bit(u8(s, p.off + 8), 0x80) == 1 then info = info .. " A" end
        local a = hdr_at(p, "aeth")
        if a then info = info .. sfmt(" %s MSN=%d", (aeth_kind(u8(s, a))), u24(s, a + 1)) end
        if p.sack_at and p.sack_at + 4 <= p.buflen then info = info .. sfmt(" SACK=%d", u24(s, p.off + p.sack_at + 1)) end
        if p.payload_len > 0 then info = info .. sfmt(" len=%d", p.payload_len) end
        if fr.cm_off then info = info .. " CM " .. string.upper(CM_MSGS[u16(s, fr.cm_off + 16)]) end
        if fr.icrc and fr.icrc ~= "good" then info = info .. " ICRC " .. fr.icrc end
        if fr.truncated then info = info .. " [truncated]" end
        pinfo.cols.info:set(info)
    end
end

-- ---- entry points ----

local encap_field = Field.new("frame.encap_type")
local frame_field = Field.new("frame")
local ENCAPS = wtap_encaps or {}
local LINKS = {
    [ENCAPS.ETHERNET or 1] = "eth",
    [ENCAPS.SLL or 25] = "sll",
    [ENCAPS.SLL2 or 210] = "sll2",
    [ENCAPS.RAW_IP or 7] = "raw",
}

local function link_type()
    local encap = encap_field()
    return encap and LINKS[encap.value]
end

-- Called from udp.port 4791 or ethertype 0x8915 (replace_infiniband) with the UDP payload or
-- the GRH: claim the bytes when they are the RoCE packet the post-dissector decodes (it adds
-- the tree); otherwise (RoCE inside a tunnel, in reassembled IP fragments, ...) hand them to the
-- dissector that had the port before, so Wireshark still decodes what rocescope does not.
local function claim(tvb, pinfo, tree)
    local link, fi = link_type(), frame_field()
    if link and fi then
        local frame = fi.source -- the whole frame's Tvb
        local caplen = frame:len()
        local fr = decode(link, caplen > 0 and frame:raw(0, caplen) or "", frame:reported_len())
        local at = tvb:offset()
        if fr.roce_off == at or (fr.net and fr.net.kind == "grh" and fr.net.off == at) then
            return tvb:len()
        end
    end
    local prev = pinfo.match_uint == ETHERTYPE_ROCEV1 and original.ethertype or original.udp
    if prev then return prev:call(tvb, pinfo, tree) end
    return 0
end

function proto.dissector(tvb, pinfo, tree)
    if tvb:offset() > 0 then return claim(tvb, pinfo, tree) end
    -- The post-dissector call: `tvb` is the whole frame.
    local link = link_type()
    if not link then return 0 end
    local caplen = tvb:len()
    local s = caplen > 0 and tvb:raw(0, caplen) or ""
    local fr = decode(link, s, tvb:reported_len())
    render(fr, tvb, pinfo, tree)
    return caplen
end

register_postdissector(proto)
apply_takeover()
