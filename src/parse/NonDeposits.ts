// Messages that are never deposits: withdrawals, card approvals and cancellations, transfers out,
// OTPs, notices, advertisements and unfilled templates. Data, not a classifier: the
// never-a-deposit guard (DepositGuard.ts) is tested against every one of them, and a
// model-written rule that extracts a deposit from any of them is rejected (TemplateRule.ts). The
// first rows are the `wd`/`other` rows of the development corpus (test/corpus/sms-dev.tsv,
// verbatim); then one real message of each kind of trap of the bank corpus
// (test/corpus/bank-sms.tsv); the rest are modelled on them and on the formats forwarders deliver.

export interface KnownNonDeposit {
  readonly kind: "wd" | "other"
  readonly bank: string
  readonly text: string
}

export const knownNonDeposits: ReadonlyArray<KnownNonDeposit> = [
  // From the corpus.
  { kind: "wd", bank: "IBK기업", text: "[Web발신] 2024/11/15 12:57 출금 354,594원 잔액 50,622원 현대카드 469***03801011 기업" },
  { kind: "wd", bank: "IBK기업", text: "[Web발신]\n2026/06/10 10:00\n출금 320,000원\n잔액 500,000원\n국민연금공단\n469***03801011\n기업" },
  { kind: "wd", bank: "IBK기업", text: "[Web발신]\n[IBK]06/12 14:23\n지급 250,000원\n한국전력공사\n잔액 984,567원\n123-******-01-012" },
  { kind: "other", bank: "KB국민", text: "[Web발신]\n[KB]09\\/06 15:09\n218301**044\n{{verificationCode}}\n입금\n{{amount}}\n잔액4" },
  { kind: "wd", bank: "KB국민", text: "보낸사람 : 16449999\n[KB]07/07 18:29\n945802**314\n박인호\n출금\n2,960,000\n잔액560,000\nccc" },
  { kind: "wd", bank: "KB국민", text: "이*름님 09/03 16:46 941602-**-***318 쿠팡 FBS출금 8,110 잔액77,139" },
  { kind: "wd", bank: "KB국민", text: "[Web발신] [KB]11/18 14:58 279801**027 과일놀이터 체크카드출금 18,000 잔액238,281" },
  { kind: "wd", bank: "KB국민", text: "[KB]04/12 15:30 출금 10,000 잔액 1,224,567" },
  { kind: "wd", bank: "KDB산업", text: "[Web발신]\n(KDB)020****3636709\n출금\n100,000원\n윤혜령\n잔액30,075,963원 07:32:29" },
  { kind: "other", bank: "NH농협", text: "[농협] 입금 예정 안내 10,000원" },
  { kind: "wd", bank: "NH농협", text: "보낸사람 : 15882100\n[Web발신]\n농협 출금780,500원\n07/06 15:27 352-****-7417-43 (주)재호 잔액505,010원" },
  { kind: "wd", bank: "NH농협", text: "[Web발신]\n농협 출금2,500원\n11/03 17:43 301-****-2640-41 파우PC 잔액5,428원" },
  { kind: "wd", bank: "NH농협(legacy ~2010)", text: "농협 2010/02/17 302-0080-1997-** 1,000원(성시원)출금.잔액0원" },
  { kind: "wd", bank: "iM뱅크(대구)", text: "iM뱅크 12/30 10:00 50813*03093 출금 55,000 잔액 1,134,248 관리비" },
  { kind: "other", bank: "unknown", text: "입금 10,000원 입금 20,000원 홍길동" },
  { kind: "wd", bank: "unknown", text: "출금 10,000원 입금계좌 123-456 홍길동" },
  { kind: "other", bank: "신한", text: "[Web발신] [신한은행] 인증번호 [482913] 타인에게 알려주지 마세요" },
  { kind: "wd", bank: "신한", text: "보낸사람 : 15778000()\n[Web발신]\n신한07/04 15:18\n110-496-922482\n출금   7,900,000\n잔액 11,040,045\n 주식회사 넥스\nbbb" },
  { kind: "wd", bank: "신한(legacy ~2010)", text: "신한 02/11 08:09[110-290-795***]지급      10,000잔액      15,600004.김미경" },
  { kind: "wd", bank: "신협", text: "보낸사람 : 15666000()\n신협132*****2222 07/07 18:38 출금 2,870,000원 이신자 잔액540,000원\nccc" },
  { kind: "wd", bank: "우리", text: "[Web발신] 우리 11/17 18:17 *250284 출금 3,000원 서울특별시－현 잔액 214,164원" },
  { kind: "wd", bank: "우체국(legacy ~2010)", text: "우체국,23:44\n610********249\n출금1,250,000원\n잔액74,456,645원\n이성호" },
  { kind: "wd", bank: "전북", text: "[Web발신]\n[전북]####946\n출금25,800원\n잔액1,115,316원\n12/24 13:39\n모> 신한신헌섭" },
  { kind: "other", bank: "카카오뱅크", text: "[Web발신]\n[카카오뱅크]\n남*현(3873)\n05\\/14 11:30\n입금 {{amount}}\n{{verificationCode}}\n잔액 6원" },
  { kind: "wd", bank: "카카오뱅크", text: "[Web발신] [카카오뱅크] 심*민(8205) 01/26 12:23 출금 20,000원 홍원표(경동나비엔용 잔액 9,733,979원" },
  { kind: "other", bank: "케이뱅크", text: "케이뱅크 [케이뱅크] 서비스 일시 중단 안내 고객님 안녕하세요 10월 18일 일요일 00시에서 10시까지" },
  { kind: "wd", bank: "토스(sentence)", text: "홍길동님께 50,000원을 보냈어요" },
  { kind: "wd", bank: "한국투자증권", text: "보낸사람 : 15445000\n[한국투자]05:11\n43****83-01\n이체출금\n2,700,000원\n(잔액507,500)\n하나은행 이신자" },
  // The bank corpus's traps, one of each kind, verbatim (their sources are in test/corpus/README.md).
  { kind: "wd", bank: "KB국민", text: "KB스타뱅킹\n출금 10,000원\n정*진님 07/15 18:39 582102-**-***852\n카카오페이 FBS출금 10,000 잔액0" },
  { kind: "wd", bank: "현대카드", text: "[Web발신]\n[현대카드]-승인\n김재*님\n1,500원(일시불)\n마노핀익스프레스신림\n누적:354,220원" },
  { kind: "other", bank: "KB국민카드", text: "[Web발신]\nKB*카드\n김재호님\n05/29 20:52\n320,000원\n우리동물메디컬 취소\n누적 560,060원" },
  { kind: "wd", bank: "토스(결제)", text: "95,040원 결제 완료 토스페이머니 ・ KT\n결제한 돈 일부를 돌려받을 수 있어요." },
  { kind: "other", bank: "토스증권", text: "미스터블루 액면분할 보유한 주식 수가 4,078주 → 815.60주로 변경되었어요. 0.60주는 입금일에 맞춰 현금으로 드려요." },
  // Modelled on the corpus: card approvals and cancellations, transfers out, deposit reversals, OTPs, ads.
  { kind: "wd", bank: "KB국민", text: "[Web발신]\nKB국민체크(5678)\n홍*동님\n11/20 12:31\n5,600원\n스타벅스코리아 사용" },
  { kind: "wd", bank: "신한카드", text: "[Web발신]\n신한카드(1234)승인 홍*동 12,000원(일시불)11/21 19:02 GS25역삼점 누적1,234,560원" },
  { kind: "other", bank: "신한카드", text: "[Web발신]\n신한카드(1234)취소 홍*동 12,000원(일시불)11/21 19:05 GS25역삼점" },
  { kind: "wd", bank: "삼성카드", text: "삼성1337승인 홍*동\n45,000원 일시불\n11/22 13:10 쿠팡\n누적512,300원" },
  { kind: "other", bank: "NH카드", text: "[Web발신]\nNH카드3*5*승인취소\n홍*동\n32,000원\n11/24 09:12\n이마트 성수점" },
  { kind: "other", bank: "케이뱅크", text: "[케이뱅크] 체크카드 승인취소 12,500원 11/29 10:11 배달의민족 홍*동" },
  { kind: "wd", bank: "카카오뱅크", text: "[Web발신] [카카오뱅크] 홍*동(1234) 11/25 10:00 자동이체출금 55,000원 KT통신요금 잔액 1,179,567원" },
  { kind: "wd", bank: "토스뱅크", text: "토스뱅크\n11/25 08:00\n출금 30,000원\n김철수님\n잔액 470,000원" },
  { kind: "wd", bank: "하나", text: "[Web발신]\n하나,11/26, 14:02\n123-******-12345\n출금30,000원\n김영수\n잔액970,000원" },
  { kind: "wd", bank: "새마을금고", text: "[MG새마을금고]\n11/28 12:00\n9002-****-1234\n출금 200,000원\n이영희\n잔액 800,000원" },
  { kind: "wd", bank: "KB국민", text: "[Web발신]\n[KB]11/30 09:00\n821337**680\n홍길동\n입금취소\n50,000\n잔액1,000,000" },
  { kind: "wd", bank: "NH농협", text: "[Web발신]\n농협 이체출금50,000원\n11/30 16:20 352-****-4273-63 박민수 잔액1,450,000원" },
  { kind: "other", bank: "우리", text: "[Web발신]\n[우리은행] 인증번호 [391024]를 입력해주세요. 타인에게 절대 알려주지 마세요." },
  { kind: "other", bank: "KB국민", text: "(광고)[KB국민은행] 홍길동님, 최대 1억원 비상금대출! 금리 연 4.5%~ 신청 kbstar.com 무료수신거부 080-000-0000" },
  { kind: "other", bank: "하나", text: "(광고)[하나은행] 첫 입금 시 최대 50,000원 캐시백! 지금 가입하세요 무료수신거부 080-111-1111" },
  { kind: "other", bank: "KB국민", text: "[국외발신]\n[KB국민] 해외결제 승인 985,000원 정상결제가 아닐 경우 고객센터 문의 바랍니다" },
  { kind: "other", bank: "NH농협", text: "[NH농협] 고객님의 계좌 352-****-4273-63 가 12/15 휴면계좌로 전환될 예정입니다. 잔액 10,000원" },
  // KB's outgoing twins of its deposit types, a trailing bank line, lines stripped.
  { kind: "wd", bank: "KB국민", text: "[Web발신]\n[KB]11/18 14:58\n279801**027\n홍길동\n스마트폰출금\n18,000\n잔액238,281\n(국민은행)" },
  { kind: "wd", bank: "KB국민", text: "[KB]11/18 14:58279801**027한국전력지로출금18,000잔액238,281" },
  { kind: "wd", bank: "KB국민", text: "[KB]11/18 14:58 279801**027 쿠팡 인터넷출금 18,000 잔액238,281" },
  { kind: "wd", bank: "KB국민", text: "[KB]11/18 14:58 279801**027 KT CMS출금 33,000 잔액238,281" },
  // Transfers to someone: arrows from the account, 님께.
  { kind: "wd", bank: "토스뱅크", text: "내 토스뱅크 통장 → 홍길동\n50,000원 출금" },
  { kind: "wd", bank: "토스뱅크", text: "내 토스뱅크 통장 → 홍길동 50,000원" },
  { kind: "wd", bank: "카카오뱅크", text: "[카카오뱅크] 홍길동님께 30,000원을 이체했어요." },
  { kind: "wd", bank: "우리", text: "[우리은행] 홍길동님에게 50,000원 송금완료" },
  // 입금 inside notices, tax and tuition texts, order confirmations, a stock notice's 입금일.
  { kind: "other", bank: "국세청", text: "[국세청] 종합소득세 환급금 50,000원이 고객님 계좌로 입금될 예정입니다" },
  { kind: "other", bank: "대학교", text: "[한빛대학교] 2027학년도 1학기 등록금 3,250,000원 입금 기한은 02/28까지입니다" },
  { kind: "other", bank: "쇼핑몰", text: "[한빛몰] 주문하신 상품의 입금이 확인되었습니다. 주문번호 20261123-0001 입금액 35,000원" },
  { kind: "other", bank: "증권", text: "[한국투자] 배당금 입금일 안내: 04/20 1,250원 (삼성전자)" },
  { kind: "other", bank: "가상계좌", text: "[한빛몰] 가상계좌 신한 110-123-456789로 35,000원을 입금해 주세요" },
  { kind: "other", bank: "공과금", text: "[서울시] 11월 자동차세 120,000원 납부 안내 입금계좌 우리 123-456" },
  { kind: "other", bank: "KB국민", text: "[KB국민] 홍길동님 입금 요청 50,000원 (메모: 회비)" },
  { kind: "other", bank: "카카오뱅크", text: "[카카오뱅크] 모임통장 회비 입금 알림서비스가 해지되었습니다" },
  { kind: "other", bank: "OTP", text: "[Web발신]\n[KB국민은행] OTP인증번호 [123456] 입금 이체 확인용" },
  { kind: "other", bank: "unfilled", text: "[Web발신]\n[하나] ${name}님 ${amount}원 입금" }
]
