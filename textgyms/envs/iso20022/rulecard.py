"""The rule card shown to the agent (levels 1-3): the translation rules of the reference
translator, including the choices the public CBPR+ rules leave open."""

RULE_CARD = """\
Translation rules (pacs.008.001.08-.13 -> MT103):
- Blocks: {1:F01<sender BIC8>A<branch or XXX>0000000000}{2:I103<receiver BIC8>X<branch or XXX>N}
  {3:{121:<UETR>}}{4: then one field per line and a last line "-}".
  Sender = AppHdr Fr (else InstgAgt), receiver = AppHdr To (else InstdAgt).
- :20: InstrId (else TxId). :23B:CRED.
- :23E: one per code, in the order SDVA INTC REPA CORT HOLD CHQB PHOB TELB PHON TELE PHOI TELI:
  SvcLvl SDVA; CtgyPurp INTC/CORT; InstrForCdtrAgt Cd (+ "/" + InstrInf, 30 characters, only
  for HOLD PHOB TELB PHON TELE PHOI TELI REPA; other codes' InstrInf goes to 72 as /ACC/);
  InstrForNxtAgt PHOA -> PHON, TELA -> TELE (+ "/" + its InstrInf); an InstrForNxtAgt InstrInf
  "/REPA/", "/PHOI/" or "/TELI/" + text -> that 23E code (+ "/" + text).
- :32A: YYMMDD + currency + amount with a decimal comma and the currency's decimals
  (JPY 1500,  EUR 12,50  KWD 7,125).
- :33B: InstdAmt; if absent, 32A's currency and amount plus the ChrgsInf amounts (minus them
  for OUR) when sender and receiver countries are both in the SWIFT EU list, when there are
  charges, or for BEN. :36: XchgRate (decimal comma, no trailing zeros), only when 33B's
  currency differs from 32A's.
- :50a: "/" + account on line 1, then: Dbtr AnyBIC -> 50A (the BIC); an address with TwnNm
  and Ctry, or a Dbtr with Id/PrvtId or Othr (Cd ARNU CCPT CUST DRLC EMPL NIDN SOSE TXID,
  Issr CC[/issuer]) -> 50F: line 1 "/" + account, else the first Othr as Cd/Issr/Id, else
  /NOTPROVIDED; then 1/name, 2/ for StrtNm BldgNb and each AdrLine (2 at most), 3/Ctry/PstCd
  TwnNm, 4/BirthDt YYYYMMDD and 5/CtryOfBirth/CityOfBirth, 6/Issr/Id (CUST), 7/Issr/Id
  (NIDN), within 5 lines; otherwise 50K: the name, then up to 3 AdrLine lines (if there are more,
  the third line is cut to 34 characters and ends with "+"). :59a: the same for Cdtr (59A,
  59F, or :59: with no letter).
- Agents: a BIC -> option A (after a "//" clearing line when ClrSysMmbId is given); no BIC:
  option D ("//" clearing line, name, address) or, for 56a/57a, option C (the clearing line
  alone). Clearing codes: USABA FW, USPID CP, GBDSC SC, IENCC IE, CACPA CC, AUBSB AU,
  DEBLZ BL, ATBLZ AT, CHBCC SW, ITNCC IT, ESNCC ES, PTNCC PT (e.g. //FW021000021).
  :52a: DbtrAgt unless it is the sender's BIC. :53A: InstgRmbrsmntAgt (else :53B: "/" +
  SttlmAcct). :54A: InstdRmbrsmntAgt.
  :56a: IntrmyAgt1. :57a: CdtrAgt unless it is the receiver's BIC and there is no 56a.
  (A 52A naming the sender or a 57A naming the receiver says the same and is accepted.)
- :70: line 1 "/ROC/" + EndToEndId (no such line if it is NOTPROVIDED); then "/INV/" +
  invoice number (Strd RfrdDocInf CINV) and "/RFB/" + CdtrRefInf Ref, one per line; then the
  Ustrd texts joined by one space, cut into consecutive 35-character pieces; at most 4 lines.
- :71A: SHAR -> SHA, DEBT -> OUR, CRED -> BEN. :71F: one per ChrgsInf (SHA, BEN; BEN with no
  ChrgsInf: 71F of zero in the 32A currency). :71G: the sum of the ChrgsInf amounts (OUR),
  in the 32A currency.
- :72: /INS/ + PrvsInstgAgt1 BIC; /INTA/ + IntrmyAgt2 BIC; /ACC/ + creditor-agent text (see
  23E); an InstrForNxtAgt InstrInf without code -> "/REC/" + text; continuation lines start
  "//"; at most 6 lines.
- :77B: RgltryRptg: "/ORDERRES/" (DEBT, BOTH) or "/BENEFRES/" (CRED) + Ctry + "//" + Cd, then
  the Inf texts joined by one space on "//" continuation lines; at most 3 lines.
- Text: accents are dropped (é -> e, ß -> ss, ø -> o); Cyrillic and Greek are transliterated
  (Ж -> J, Х -> KH, Щ -> SHCH, Ю -> IU, Я -> IA; Θ -> TH, Χ -> CH); any other character outside
  the SWIFT X set (a-z A-Z 0-9 / - ? : ( ) . , ' + space) becomes "."; blanks are collapsed; a
  line that would start with ":" or "-" starts with "." instead.
- Truncation: a value longer than its room is cut and its last kept character becomes "+"
  (20: 16; names, address lines and the /ROC/ line: 35; 50F/59F: 33 after "n/", 30 after
  "3/CC/"). A field with more lines than allowed keeps its first lines and the last kept
  line ends with "+". Line order matters.
"""
