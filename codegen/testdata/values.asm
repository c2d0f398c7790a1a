; hale program image v5, entry app.hl

files:
  0 app.hl

types:
  t6 type Point { x: int, y: int }
  t7 enum Shape { Dot, Circle(Point, float), Named(string) }
  t8 [int]
  t9 {string: float}
  t10 {bool: int}
  t11 [bool]
  t12 [float]
  t13 [string]

consts:
  k0 float 0.0
  k1 float 3.14
  k2 string "zero"
  k3 int 99999999999
  k4 string "big"
  k5 string "a"
  k6 string "A"
  k7 string "yes"
  k8 string "no"
  k9 int 10000000000
  k10 string "k"
  k11 float 2.0
  k12 float 1.0
  k13 string "b"
  k14 bytes b"x"
  k15 string "12"
  k16 string "-3"
  k17 string "x"
  k18 bytes b"\x00"
  k19 bool true
  k20 string ","
  k21 string ", "
  k22 string "1.5"
  k23 enum Shape::Dot
  k24 string "math"
  k25 string "five"
  k26 enum Shape::Circle
  k27 enum Shape::Named
  k28 float 1.5
  k29 string "a,b"
  k30 bytes b"\x01\xff"

prims:

topics:

loci:
  L0 Main slots 0 init f3(Main.init) start f4(Main.on start)

instances:
  I0 Main locus L0 spawn f5(main) on main consumer 0

consumers:
  0 main "main" instances [0]

func f0 area (fn) params 1 slots 4 frame 6 -> float
  ; r0 s: Shape
  ; r1 r: float
  ; r2 n: string
  ; r3 $tmp: Shape
  0000* jne.variant   r0, 0, @0003                   ; app.hl:7:9
  0001* loadk         r4, k0(0.0)                    ; app.hl:7:32
  0002  ret           r4                             ; app.hl:7:25
  0003  jne.variant   r0, 1, @0009                   ; app.hl:8:9
  0004  enum.field    r1, r0, 1
  0005* loadk         r4, k1(3.14)                   ; app.hl:8:41
  0006  mul.float     r4, r4, r1                     ; app.hl:8:46
  0007  mul.float     r4, r4, r1                     ; app.hl:8:50
  0008  ret           r4                             ; app.hl:8:34
  0009  enum.field    r2, r0, 0                      ; app.hl:9:9
  0010* len.str       r5, r2                         ; app.hl:9:43
  0011  callb         r4, float.int, r5              ; app.hl:9:37
  0012  ret           r4                             ; app.hl:9:30
  0013  ret.void                                     ; app.hl:5:4

func f1 words (fn) params 3 slots 4 frame 5 -> string
  ; r0 n: int
  ; r1 s: string
  ; r2 b: bool
  ; r3 $tmp: int
  0000* jne.int.k     r0, 0, @0003                   ; app.hl:14:15
  0001* loadk         r4, k2("zero")                 ; app.hl:14:29
  0002  ret           r4                             ; app.hl:14:22
  0003  loadk         r4, k3(99999999999)            ; app.hl:14:40
  0004  jne.int       r0, r4, @0007
  0005* loadk         r4, k4("big")                  ; app.hl:14:64
  0006  ret           r4                             ; app.hl:14:57
  0007* jne.str.k     r1, k5("a"), @0010             ; app.hl:15:15
  0008* loadk         r4, k6("A")                    ; app.hl:15:31
  0009  ret           r4                             ; app.hl:15:24
  0010* jump.f        r2, @0013                      ; app.hl:16:15
  0011* loadk         r4, k7("yes")                  ; app.hl:16:32
  0012  ret           r4                             ; app.hl:16:25
  0013* loadk         r4, k8("no")                   ; app.hl:16:60
  0014  ret           r4                             ; app.hl:16:53
  0015  ret.void                                     ; app.hl:13:4

func f2 ops (fn) params 4 slots 9 frame 25
  ; r0 a: int
  ; r1 f: float
  ; r2 s: string
  ; r3 bs: bytes
  ; r4 p: Point
  ; r5 xs: [int]
  ; r6 m: {string: float}
  ; r7 e: {bool: int}
  ; r8 t: string
  0000* loadint       r11, 2                         ; app.hl:20:34
  0001  mul.int       r9, r0, r11                    ; app.hl:20:32
  0002  move          r10, r0                        ; app.hl:20:24
  0003  new.struct    r4, r9, t6(Point)              ; app.hl:20:13
  0004* field         r9, r4, 0                      ; app.hl:21:5
  0005  add.int.k     r9, r9, 1
  0006  setfield      r4, 0, r9
  0007* move          r9, r0                         ; app.hl:22:15
  0008  neg.int       r10, r0                        ; app.hl:22:18
  0009  loadint       r16, 3                         ; app.hl:22:26
  0010  div.int       r11, r0, r16                   ; app.hl:22:24
  0011  loadint       r16, 3                         ; app.hl:22:33
  0012  rem.int       r12, r0, r16                   ; app.hl:22:31
  0013  add.int.k     r13, r0, -1                    ; app.hl:22:38
  0014  loadint       r14, 1                         ; app.hl:22:43
  0015  sub.int       r14, r14, r0                   ; app.hl:22:45
  0016  loadk         r15, k9(10000000000)           ; app.hl:22:50
  0017  new.list      r5, r9, 7                      ; app.hl:22:14
  0018* loadint       r9, 0                          ; app.hl:23:8
  0019  loadint       r11, 1                         ; app.hl:23:16
  0020  index.list    r10, r5, r11                   ; app.hl:23:13
  0021  setindex.list r5, r9, r10                    ; app.hl:23:5
  0022* loadk         r9, k10("k")                   ; app.hl:24:14
  0023  move          r10, r1                        ; app.hl:24:19
  0024  new.map       r6, r9, 1                      ; app.hl:24:13
  0025* loadk         r9, k10("k")                   ; app.hl:25:7
  0026  loadk         r11, k11(2.0)                  ; app.hl:25:18
  0027  div.float     r10, r1, r11                   ; app.hl:25:16
  0028  mul.float     r11, r1, r1                    ; app.hl:25:26
  0029  sub.float     r10, r10, r11                  ; app.hl:25:22
  0030  loadk         r12, k11(2.0)                  ; app.hl:25:36
  0031  rem.float     r11, r1, r12                   ; app.hl:25:34
  0032  add.float     r10, r10, r11                  ; app.hl:25:30
  0033  setindex.map  r6, r9, r10                    ; app.hl:25:5
  0034* empty.map     r7, bool                       ; app.hl:26:26
  0035* move          r10, r1                        ; app.hl:27:21
  0036  callb         r9, str, r10                   ; app.hl:27:17
  0037  concat.str    r8, r2, r9                     ; app.hl:27:15
  0038* loadint       r20, 1                         ; app.hl:28:28
  0039  loadint       r21, 2                         ; app.hl:28:34
  0040  new.struct    r19, r20, t6(Point)            ; app.hl:28:17
  0041  eq            r11, r4, r19                   ; app.hl:28:14
  0042  ne            r12, r4, r4                    ; app.hl:28:41
  0043  loadk         r19, k12(1.0)                  ; app.hl:28:51
  0044  lt.float      r13, r1, r19                   ; app.hl:28:49
  0045  loadk         r19, k12(1.0)                  ; app.hl:28:61
  0046  le.float      r14, r1, r19                   ; app.hl:28:58
  0047  loadk         r19, k11(2.0)                  ; app.hl:28:70
  0048  lt.float      r15, r19, r1                   ; app.hl:28:68
  0049  loadk         r19, k11(2.0)                  ; app.hl:28:80
  0050  le.float      r16, r19, r1                   ; app.hl:28:77
  0051  eq.float      r17, r1, r1                    ; app.hl:28:87
  0052  ne.float      r18, r1, r1                    ; app.hl:28:95
  0053  new.list      r10, r11, 8                    ; app.hl:28:11
  0054  callb         r9, print, r10                 ; app.hl:28:5
  0055* loadk         r20, k13("b")                  ; app.hl:29:16
  0056  lt.str        r11, r2, r20                   ; app.hl:29:14
  0057  loadk         r20, k13("b")                  ; app.hl:29:26
  0058  le.str        r12, r2, r20                   ; app.hl:29:23
  0059  loadk         r20, k13("b")                  ; app.hl:29:35
  0060  lt.str        r13, r20, r2                   ; app.hl:29:33
  0061  loadk         r20, k13("b")                  ; app.hl:29:45
  0062  le.str        r14, r20, r2                   ; app.hl:29:42
  0063  loadk         r20, k13("b")                  ; app.hl:29:55
  0064  eq.str        r15, r2, r20                   ; app.hl:29:52
  0065  loadk         r20, k13("b")                  ; app.hl:29:65
  0066  ne.str        r16, r2, r20                   ; app.hl:29:62
  0067  eq            r17, r5, r5                    ; app.hl:29:73
  0068  eq.str        r18, r3, r3                    ; app.hl:29:83
  0069  loadk         r20, k14(b"x")                 ; app.hl:29:96
  0070  ne.str        r19, r3, r20                   ; app.hl:29:93
  0071  new.list      r10, r11, 9                    ; app.hl:29:11
  0072  callb         r9, print, r10                 ; app.hl:29:5
  0073* neg.float     r11, r1                        ; app.hl:30:12
  0074  move          r22, r0                        ; app.hl:30:22
  0075  callb         r12, float.int, r22            ; app.hl:30:16
  0076  move          r22, r1                        ; app.hl:30:42
  0077  callb         r13, std::math::sqrt, r22      ; app.hl:30:26
  0078  move          r22, r1                        ; app.hl:30:63
  0079  callb         r14, std::math::floor, r22     ; app.hl:30:46
  0080  move          r22, r1                        ; app.hl:30:83
  0081  callb         r15, std::math::ceil, r22      ; app.hl:30:67
  0082  move          r22, r1                        ; app.hl:30:102
  0083  loadk         r23, k11(2.0)                  ; app.hl:30:105
  0084  callb         r16, std::math::pow, r22       ; app.hl:30:87
  0085  move          r22, r1                        ; app.hl:30:126
  0086  callb         r17, std::math::log, r22       ; app.hl:30:111
  0087  move          r22, r1                        ; app.hl:30:145
  0088  callb         r18, std::math::exp, r22       ; app.hl:30:130
  0089  move          r22, r1                        ; app.hl:30:153
  0090  callb         r19, abs.float, r22            ; app.hl:30:149
  0091  move          r22, r1                        ; app.hl:30:161
  0092  loadk         r23, k12(1.0)                  ; app.hl:30:164
  0093  callb         r20, min.float, r22            ; app.hl:30:157
  0094  move          r22, r1                        ; app.hl:30:174
  0095  loadk         r23, k12(1.0)                  ; app.hl:30:177
  0096  callb         r21, max.float, r22            ; app.hl:30:170
  0097  new.list      r10, r11, 11                   ; app.hl:30:11
  0098  callb         r9, print, r10                 ; app.hl:30:5
  0099* loadint       r17, 6                         ; app.hl:31:16
  0100  and.int       r11, r0, r17                   ; app.hl:31:14
  0101  loadint       r17, 6                         ; app.hl:31:23
  0102  or.int        r12, r0, r17                   ; app.hl:31:21
  0103  loadint       r17, 6                         ; app.hl:31:30
  0104  xor.int       r13, r0, r17                   ; app.hl:31:28
  0105  loadint       r17, 2                         ; app.hl:31:38
  0106  shl.int       r14, r0, r17                   ; app.hl:31:35
  0107  loadint       r17, 1                         ; app.hl:31:46
  0108  shr.int       r15, r0, r17                   ; app.hl:31:43
  0109  not.int       r16, r0                        ; app.hl:31:49
  0110  new.list      r10, r11, 6                    ; app.hl:31:11
  0111  callb         r9, print, r10                 ; app.hl:31:5
  0112* move          r23, r0                        ; app.hl:32:16
  0113  callb         r11, abs.int, r23              ; app.hl:32:12
  0114  move          r23, r0                        ; app.hl:32:24
  0115  loadint       r24, 1                         ; app.hl:32:27
  0116  callb         r12, min.int, r23              ; app.hl:32:20
  0117  move          r23, r0                        ; app.hl:32:35
  0118  loadint       r24, 1                         ; app.hl:32:38
  0119  callb         r13, max.int, r23              ; app.hl:32:31
  0120  move          r23, r1                        ; app.hl:32:46
  0121  callb         r14, int.float, r23            ; app.hl:32:42
  0122  loadk         r23, k15("12")                 ; app.hl:32:54
  0123  callb         r15, int.string, r23           ; app.hl:32:50
  0124  loadk         r24, k16("-3")                 ; app.hl:32:66
  0125  callb         r23, int.string, r24           ; app.hl:32:62
  0126  add.int       r15, r15, r23                  ; app.hl:32:60
  0127  len.list      r16, r5                        ; app.hl:32:73
  0128  len.map       r17, r6                        ; app.hl:32:82
  0129  len.str       r18, r2                        ; app.hl:32:90
  0130  len.str       r19, r3                        ; app.hl:32:98
  0131  loadint       r23, 0                         ; app.hl:32:110
  0132  index.str     r20, r3, r23                   ; app.hl:32:107
  0133  loadint       r23, 0                         ; app.hl:32:116
  0134  index.str     r21, r2, r23                   ; app.hl:32:114
  0135  move          r23, r2                        ; app.hl:32:125
  0136  loadk         r24, k17("x")                  ; app.hl:32:128
  0137  callb         r22, find, r23                 ; app.hl:32:120
  0138  new.list      r10, r11, 12                   ; app.hl:32:11
  0139  callb         r9, print, r10                 ; app.hl:32:5
  0140* loadk         r11, k18(b"\x00")              ; app.hl:33:16
  0141  concat.bytes  r10, r3, r11                   ; app.hl:33:14
  0142  move          r12, r3                        ; app.hl:33:32
  0143  loadint       r13, 0                         ; app.hl:33:36
  0144  loadint       r14, 1                         ; app.hl:33:39
  0145  callb         r11, slice.bytes, r12          ; app.hl:33:26
  0146  concat.bytes  r10, r10, r11                  ; app.hl:33:24
  0147  callb         r9, print, r10                 ; app.hl:33:5
  0148* move          r12, r5                        ; app.hl:34:22
  0149  loadint       r13, 1                         ; app.hl:34:26
  0150  loadint       r14, 2                         ; app.hl:34:29
  0151  callb         r11, slice.list, r12           ; app.hl:34:16
  0152  concat.list   r10, r5, r11                   ; app.hl:34:14
  0153  move          r12, r5                        ; app.hl:34:39
  0154  callb         r11, sort, r12                 ; app.hl:34:34
  0155  concat.list   r10, r10, r11                  ; app.hl:34:32
  0156  callb         r9, print, r10                 ; app.hl:34:5
  0157* loadint       r10, 1                         ; app.hl:35:14
  0158  push          r5, r10                        ; app.hl:35:5
  0159* move          r10, r5                        ; app.hl:35:25
  0160  loadint       r11, 0                         ; app.hl:35:29
  0161  move          r13, r5                        ; app.hl:35:36
  0162  callb         r12, pop, r13                  ; app.hl:35:32
  0163  callb         r9, insert, r10                ; app.hl:35:18
  0164* move          r11, r5                        ; app.hl:35:55
  0165  loadint       r12, 0                         ; app.hl:35:59
  0166  callb         r10, remove, r11               ; app.hl:35:48
  0167  callb         r9, print, r10                 ; app.hl:35:42
  0168* move          r17, r6                        ; app.hl:36:16
  0169  loadk         r18, k10("k")                  ; app.hl:36:19
  0170  callb         r11, has, r17                  ; app.hl:36:12
  0171  move          r17, r2                        ; app.hl:36:34
  0172  loadk         r18, k5("a")                   ; app.hl:36:37
  0173  callb         r12, contains.str, r17         ; app.hl:36:25
  0174  move          r17, r5                        ; app.hl:36:52
  0175  loadint       r18, 1                         ; app.hl:36:56
  0176  callb         r13, contains.list, r17        ; app.hl:36:43
  0177  move          r17, r2                        ; app.hl:36:72
  0178  loadk         r18, k5("a")                   ; app.hl:36:75
  0179  callb         r14, starts_with, r17          ; app.hl:36:60
  0180  move          r17, r2                        ; app.hl:36:91
  0181  loadk         r18, k5("a")                   ; app.hl:36:94
  0182  callb         r15, ends_with, r17            ; app.hl:36:81
  0183  move          r17, r7                        ; app.hl:36:105
  0184  loadk         r18, k19(true)                 ; app.hl:36:108
  0185  callb         r16, has, r17                  ; app.hl:36:101
  0186  not           r16, r16                       ; app.hl:36:100
  0187  new.list      r10, r11, 6                    ; app.hl:36:11
  0188  callb         r9, print, r10                 ; app.hl:36:5
  0189* move          r11, r6                        ; app.hl:37:16
  0190  callb         r10, keys, r11                 ; app.hl:37:11
  0191  callb         r9, print, r10                 ; app.hl:37:5
  0192* move          r11, r6                        ; app.hl:37:34
  0193  callb         r10, values, r11               ; app.hl:37:27
  0194  callb         r9, print, r10                 ; app.hl:37:21
  0195* loadk         r11, k10("k")                  ; app.hl:37:47
  0196  index.map     r10, r6, r11                   ; app.hl:37:45
  0197  callb         r9, print, r10                 ; app.hl:37:39
  0198* move          r10, r6                        ; app.hl:37:61
  0199  loadk         r11, k10("k")                  ; app.hl:37:64
  0200  callb         r9, delete, r10                ; app.hl:37:54
  0201* move          r11, r2                        ; app.hl:38:17
  0202  loadk         r12, k20(",")                  ; app.hl:38:20
  0203  callb         r10, split, r11                ; app.hl:38:11
  0204  callb         r9, print, r10                 ; app.hl:38:5
  0205* loadk         r13, k5("a")                   ; app.hl:38:39
  0206  move          r14, r2                        ; app.hl:38:44
  0207  new.list      r11, r13, 2                    ; app.hl:38:38
  0208  loadk         r12, k21(", ")                 ; app.hl:38:48
  0209  callb         r10, join, r11                 ; app.hl:38:33
  0210  callb         r9, print, r10                 ; app.hl:38:27
  0211* move          r11, r2                        ; app.hl:38:67
  0212  callb         r10, trim, r11                 ; app.hl:38:62
  0213  move          r12, r2                        ; app.hl:38:78
  0214  callb         r11, upper, r12                ; app.hl:38:72
  0215  concat.str    r10, r10, r11                  ; app.hl:38:70
  0216  move          r12, r2                        ; app.hl:38:89
  0217  callb         r11, lower, r12                ; app.hl:38:83
  0218  concat.str    r10, r10, r11                  ; app.hl:38:81
  0219  move          r12, r2                        ; app.hl:38:102
  0220  loadk         r13, k5("a")                   ; app.hl:38:105
  0221  loadk         r14, k13("b")                  ; app.hl:38:110
  0222  callb         r11, replace, r12              ; app.hl:38:94
  0223  concat.str    r10, r10, r11                  ; app.hl:38:92
  0224  move          r12, r2                        ; app.hl:38:123
  0225  loadint       r13, 0                         ; app.hl:38:126
  0226  loadint       r14, 1                         ; app.hl:38:129
  0227  callb         r11, slice.str, r12            ; app.hl:38:117
  0228  concat.str    r10, r10, r11                  ; app.hl:38:115
  0229  callb         r9, print, r10                 ; app.hl:38:56
  0230* loadk         r11, k22("1.5")                ; app.hl:39:17
  0231  callb         r10, float.string, r11         ; app.hl:39:11
  0232  loadk         r11, k12(1.0)                  ; app.hl:39:26
  0233  add.float     r10, r10, r11                  ; app.hl:39:24
  0234  callb         r9, print, r10                 ; app.hl:39:5
  0235* move          r11, r4                        ; app.hl:39:56
  0236  callb         r10, std::json::encode, r11    ; app.hl:39:38
  0237  callb         r9, print, r10                 ; app.hl:39:32
  0238* loadk         r10, k23(Shape::Dot)           ; app.hl:39:67
  0239  callb         r9, print, r10                 ; app.hl:39:61
  0240* eq.int        r10, r0, r0                    ; app.hl:40:14
  0241  loadk         r11, k24("math")               ; app.hl:40:20
  0242  callb         r9, assert, r10                ; app.hl:40:5
  0243* jne.int.k     r0, 5, @0246                   ; app.hl:40:34
  0244* loadk         r10, k25("five")               ; app.hl:40:47
  0245  callb         r9, panic, r10                 ; app.hl:40:41
  0246* move          r11, r4                        ; app.hl:41:30
  0247  loadk         r12, k12(1.0)                  ; app.hl:41:33
  0248  new.enum      r10, r11, k26(Shape::Circle)   ; app.hl:41:16
  0249  call          r10, f0(area)                  ; app.hl:41:11
  0250  move          r12, r8                        ; app.hl:41:59
  0251  new.enum      r11, r12, k27(Shape::Named)    ; app.hl:41:46
  0252  call          r11, f0(area)                  ; app.hl:41:41
  0253  add.float     r10, r10, r11                  ; app.hl:41:39
  0254  callb         r9, print, r10                 ; app.hl:41:5
  0255* loadint       r10, 0                         ; app.hl:42:17
  0256  loadk         r11, k5("a")                   ; app.hl:42:20
  0257  loadk         r12, k19(true)                 ; app.hl:42:25
  0258  call          r10, f1(words)                 ; app.hl:42:11
  0259  callb         r9, print, r10                 ; app.hl:42:5
  0260  ret.void                                     ; app.hl:19:4

func f3 Main.init (init) params 0 slots 0 frame 0
  0000  ret.void                                     ; app.hl:45:7

func f4 Main.on start (start) params 0 slots 0 frame 4
  0000* loadint       r0, 7                          ; app.hl:46:20
  0001  loadk         r1, k28(1.5)                   ; app.hl:46:23
  0002  loadk         r2, k29("a,b")                 ; app.hl:46:28
  0003  loadk         r3, k30(b"\x01\xff")           ; app.hl:46:35
  0004  call          r0, f2(ops)                    ; app.hl:46:16
  0005  ret.void                                     ; app.hl:46:5

func f5 main (spawn) params 0 slots 0 frame 0
  0000  ret.void                                     ; app.hl:49:8
