-- Ultra Ethernet PDS / SES dissector for the frames `sim` writes to pcap (UDP 4793), for
-- Wireshark versions without a UET dissector (e.g. 4.0 in Debian 12).
--   wireshark -X lua_script:contrib/wireshark/uet_pds.lua results/uec-incast/h1-uec-nscc.pcap
--   tshark   -X lua_script:contrib/wireshark/uet_pds.lua -r FILE -Y 'uet_pds.type == 10'
-- Layouts: UE 1.0 PDS as in the public xdp2 project's uet/pds.h (prologue: type 5 bits, next
-- header / control type 4 bits, flags 7 bits), and the first two bytes of the SES standard
-- request header (opcode, SOM/EOM).

local p = Proto("uet_pds", "Ultra Ethernet PDS")
local types = { [2] = "RUD_REQ", [3] = "ROD_REQ", [7] = "ACK", [8] = "ACK_CC", [10] = "NACK", [11] = "CONTROL" }
local nack_codes = { [1] = "TRIMMED", [2] = "TRIMMED_LASTHOP" }
local ctl_types = { [7] = "CREDIT", [8] = "CREDIT_REQ" }

local f = {
  type = ProtoField.uint16("uet_pds.type", "Type", base.DEC, types, 0xf800),
  next_hdr = ProtoField.uint16("uet_pds.next_hdr", "Next header / control type", base.DEC, nil, 0x0780),
  retrans = ProtoField.bool("uet_pds.retrans", "Retransmission (of the request, or the request NACKed/ACKed was one)", 16, nil, 0x0010),
  ackreq = ProtoField.bool("uet_pds.ackreq", "ACK request", 16, nil, 0x0008),
  ecn = ProtoField.bool("uet_pds.ecn_marked", "ECN marked", 16, nil, 0x0020),
  psn = ProtoField.uint32("uet_pds.psn", "PSN"),
  cack = ProtoField.uint32("uet_pds.cack_psn", "Cumulative ACK PSN"),
  spdcid = ProtoField.uint16("uet_pds.spdcid", "Source PDC"),
  dpdcid = ProtoField.uint16("uet_pds.dpdcid", "Destination PDC"),
  sack_off = ProtoField.uint16("uet_pds.sack_psn_offset", "SACK PSN offset"),
  sack = ProtoField.uint64("uet_pds.sack_bitmap", "SACK bitmap", base.HEX),
  nack_code = ProtoField.uint8("uet_pds.nack_code", "NACK code", base.HEX, nack_codes),
  ctl_type = ProtoField.uint16("uet_pds.ctl_type", "Control type", base.DEC, ctl_types, 0x0780),
  credit = ProtoField.uint32("uet_pds.credit", "Credit: total granted, or pull target (256 B quanta)"),
  ses_opcode = ProtoField.uint8("uet_pds.ses.opcode", "SES opcode", base.DEC, { [1] = "WRITE" }, 0x3f),
  som = ProtoField.bool("uet_pds.ses.som", "Start of message", 8, nil, 0x01),
  eom = ProtoField.bool("uet_pds.ses.eom", "End of message", 8, nil, 0x02),
  payload = ProtoField.uint32("uet_pds.payload_len", "Payload length"),
}
p.fields = f

function p.dissector(buf, pinfo, tree)
  if buf:len() < 12 then return 0 end
  pinfo.cols.protocol = "UET"
  local t = tree:add(p, buf())
  local w = buf(0, 2):uint()
  local ty = bit.rshift(w, 11)
  t:add(f.type, buf(0, 2))
  if ty == 2 or ty == 3 then
    t:add(f.next_hdr, buf(0, 2)); t:add(f.retrans, buf(0, 2)); t:add(f.ackreq, buf(0, 2))
    t:add(f.psn, buf(4, 4)); t:add(f.spdcid, buf(8, 2)); t:add(f.dpdcid, buf(10, 2))
    local info = "RUD_REQ PSN=" .. buf(4, 4):uint()
    if buf:len() >= 56 then
      t:add(f.ses_opcode, buf(12, 1)); t:add(f.som, buf(13, 1)); t:add(f.eom, buf(13, 1))
      t:add(f.payload, buf(12, 0), buf:len() - 56)
      if buf:len() == 56 then info = info .. " [trimmed]" end
    end
    pinfo.cols.info = info
  elseif ty == 7 or ty == 8 then
    if buf:len() < 32 then return 0 end
    t:add(f.ecn, buf(0, 2)); t:add(f.retrans, buf(0, 2))
    t:add(f.cack, buf(4, 4)); t:add(f.spdcid, buf(8, 2)); t:add(f.dpdcid, buf(10, 2))
    t:add(f.sack_off, buf(14, 2)); t:add(f.sack, buf(16, 8))
    pinfo.cols.info = "ACK_CC CACK=" .. buf(4, 4):uint()
  elseif ty == 10 then
    if buf:len() < 16 then return 0 end
    t:add(f.retrans, buf(0, 2)); t:add(f.nack_code, buf(2, 1))
    t:add(f.psn, buf(4, 4)); t:add(f.spdcid, buf(8, 2)); t:add(f.dpdcid, buf(10, 2))
    pinfo.cols.info = "NACK " .. (nack_codes[buf(2, 1):uint()] or "?") .. " PSN=" .. buf(4, 4):uint()
  elseif ty == 11 then
    if buf:len() < 16 then return 0 end
    t:add(f.ctl_type, buf(0, 2)); t:add(f.psn, buf(4, 4)); t:add(f.spdcid, buf(8, 2)); t:add(f.dpdcid, buf(10, 2))
    t:add(f.credit, buf(12, 4))
    pinfo.cols.info = "CONTROL credit=" .. buf(12, 4):uint()
  end
  return buf:len()
end

DissectorTable.get("udp.port"):add(4793, p)

-- UE link level retry's LLR_ACK / LLR_NACK control ordered sets, as `sim` writes them to pcap:
-- an 8 B 64b/66b control block has no frame of its own on the wire, so the simulator wraps it
-- in one (IEEE 802 local experimental EtherType 0x88B5; models/src/pcap/link.rs). The block's
-- layout as a UE link format data model gives it (UE 1.0.1 section 5.1.4, tables 5-7, 5-8):
-- block type 0x4B, CtlOS type (0x01 LLR_ACK, 0x02 LLR_NACK, 0x03 LLR_INIT, 0x04
-- LLR_INIT_ECHO), a 20-bit sequence number, O-code 6.
local llr = Proto("ue_llr", "UE Link Level Retry ordered set")
local llr_types = { [1] = "LLR_ACK", [2] = "LLR_NACK", [3] = "LLR_INIT", [4] = "LLR_INIT_ECHO" }
local lf = {
  block = ProtoField.uint8("ue_llr.block_type", "Block type", base.HEX),
  type = ProtoField.uint8("ue_llr.type", "Type", base.HEX, llr_types),
  seq = ProtoField.uint32("ue_llr.seq", "Sequence number (last good frame)"),
  ocode = ProtoField.uint8("ue_llr.ocode", "O-code", base.HEX, nil, 0x0f),
}
llr.fields = lf

function llr.dissector(buf, pinfo, tree)
  if buf:len() < 8 or buf(0, 1):uint() ~= 0x4b then return 0 end
  pinfo.cols.protocol = "UE LLR"
  local t = tree:add(llr, buf(0, 8))
  local seq = bit.bor(bit.lshift(buf(2, 1):uint(), 12), bit.lshift(buf(3, 1):uint(), 4), bit.rshift(buf(4, 1):uint(), 4))
  t:add(lf.block, buf(0, 1)); t:add(lf.type, buf(1, 1)); t:add(lf.seq, buf(2, 3), seq); t:add(lf.ocode, buf(4, 1))
  pinfo.cols.info = (llr_types[buf(1, 1):uint()] or "?") .. " seq=" .. seq
  return 8
end

DissectorTable.get("ethertype"):add(0x88b5, llr)
