// The languages the copy writer writes: the connective and template phrases of each (the user's own
// words are never translated), and the resolution of a client's `language` (a name in English or
// in the language itself, a code or a locale) to one of them. Covers the languages of the built-in
// voices (spec/voices.yaml) except Japanese, whose words are not separated by spaces (a script
// cannot be sized by counting words); `supportedWriterLanguage` answers undefined for it.

export interface LanguagePack {
  code: string;
  /** English name, for a remote model's instructions. */
  name: string;
  /** Sentence end used when a sentence is shortened. */
  stop: string;
  /** Words after which a brief names its subject ("a video about X"), lower case. */
  about: string[];
  hooks: string[];
  hookExtra: string[];
  /** Opening sentence of each beat: the first ("Here's why."), three middle ones, the last. */
  leads: [string, string, string, string, string];
  /** Generic sentences about the topic that fill a beat when the brief runs out. */
  fillers: string[];
  /** A short on-screen title for each filler, in the same order (a faceless scene's title); else a phrase of it. */
  fillerTitles?: string[];
  cta: string;
  ctaExtra: string[];
  slideHook: string;
  slideHeadings: string[];
  slideCtaHeading: string;
  slideCtaBody: string;
}

const en: LanguagePack = {
  code: 'en',
  name: 'English',
  stop: '.',
  about: ['about'],
  hooks: [
    "Here's what nobody tells you about {topic}.",
    'Stop scrolling if you care about {topic}.',
    "You're going to want to know this about {topic}.",
  ],
  hookExtra: ['Stay with me until the end.'],
  leads: ["Here's why.", 'First things first.', "There's more.", 'Now the good part.', 'And finally.'],
  fillers: [
    'You can save time every single day with {topic}.',
    "Most people overlook {topic}, and that's a mistake.",
    "Once you try {topic}, it's hard to go back.",
    'The results with {topic} speak for themselves.',
    'Beginners and experts alike get value from {topic}.',
    'It only takes a few minutes to get started with {topic}.',
    'People who switched to {topic} never looked back.',
    'Everyday life gets simpler with {topic}.',
    'The details are what make {topic} stand out.',
    "You don't need a big budget to enjoy {topic}.",
    'Small changes with {topic} add up fast.',
    "That's the real difference {topic} makes.",
    'Ask anyone who tried {topic} and you will hear the same.',
    'Give {topic} one week and judge for yourself.',
    'The sooner you start with {topic}, the sooner you see the difference.',
    'There is a reason more people talk about {topic} every year.',
  ],
  fillerTitles: [
    'Save time every day',
    "Don't overlook it",
    'Hard to go back',
    'The results speak',
    'For beginners and experts',
    'Start in minutes',
    'Nobody looks back',
    'Everyday life, simpler',
    'The details matter',
    'No big budget needed',
    'Small changes add up',
    'The real difference',
    'Ask anyone who tried it',
    'Give it one week',
    'Start sooner',
    'Everyone is talking',
  ],
  cta: 'Follow for more about {topic}.',
  ctaExtra: ["Save this video so you don't forget.", 'Share it with someone who needs to hear it.'],
  slideHook: 'Swipe to see why.',
  slideHeadings: [
    'Why it matters',
    'What you get',
    'How it works',
    'The details',
    'Good to know',
    'What people love',
    'The difference',
    'The bottom line',
  ],
  slideCtaHeading: 'Ready to try {topic}?',
  slideCtaBody: 'Follow for more, and save this post for later.',
};

const es: LanguagePack = {
  code: 'es',
  name: 'Spanish',
  stop: '.',
  about: ['sobre', 'acerca de'],
  hooks: [
    'Esto es lo que nadie te cuenta sobre {topic}.',
    'Deja de deslizar si te importa {topic}.',
    'Vas a querer saber esto sobre {topic}.',
  ],
  hookExtra: ['Quédate hasta el final.'],
  leads: ['Te explico por qué.', 'Lo primero es lo primero.', 'Y hay más.', 'Ahora viene lo mejor.', 'Y por último.'],
  fillers: [
    'Puedes ahorrar tiempo cada día con {topic}.',
    'Mucha gente pasa por alto {topic}, y es un error.',
    'Cuando pruebas {topic}, es difícil volver atrás.',
    'Los resultados con {topic} hablan por sí solos.',
    'Principiantes y expertos sacan provecho de {topic}.',
    'Solo hacen falta unos minutos para empezar con {topic}.',
    'Quienes se pasaron a {topic} no se arrepienten.',
    'El día a día es más sencillo con {topic}.',
    'Los detalles son lo que hace especial a {topic}.',
    'No necesitas un gran presupuesto para disfrutar de {topic}.',
    'Los pequeños cambios con {topic} suman rápido.',
    'Esa es la verdadera diferencia de {topic}.',
  ],
  cta: 'Sígueme para más sobre {topic}.',
  ctaExtra: ['Guarda este video para no olvidarlo.', 'Compártelo con alguien que lo necesite.'],
  slideHook: 'Desliza para descubrir por qué.',
  slideHeadings: [
    'Por qué importa',
    'Lo que obtienes',
    'Cómo funciona',
    'Los detalles',
    'Es bueno saberlo',
    'Lo que más gusta',
    'La diferencia',
    'En resumen',
  ],
  slideCtaHeading: '¿Listo para probar {topic}?',
  slideCtaBody: 'Síguenos para más y guarda esta publicación.',
};

const fr: LanguagePack = {
  code: 'fr',
  name: 'French',
  stop: '.',
  about: ['sur', 'à propos de'],
  hooks: [
    'Voici ce que personne ne vous dit sur {topic}.',
    'Arrêtez de défiler si {topic} vous intéresse.',
    'Vous allez vouloir savoir ça sur {topic}.',
  ],
  hookExtra: ["Restez jusqu'à la fin."],
  leads: ['Voici pourquoi.', 'Commençons par le début.', "Et ce n'est pas tout.", 'Maintenant, le meilleur.', 'Et pour finir.'],
  fillers: [
    'Vous gagnez du temps chaque jour avec {topic}.',
    "Beaucoup de gens négligent {topic}, et c'est une erreur.",
    'Une fois que vous essayez {topic}, difficile de revenir en arrière.',
    "Les résultats avec {topic} parlent d'eux-mêmes.",
    'Débutants comme experts profitent de {topic}.',
    'Il suffit de quelques minutes pour commencer avec {topic}.',
    'Ceux qui ont adopté {topic} ne le regrettent pas.',
    'Le quotidien devient plus simple avec {topic}.',
    'Ce sont les détails qui font la force de {topic}.',
    "Pas besoin d'un gros budget pour profiter de {topic}.",
    'Les petits changements avec {topic} comptent vite.',
    'Voilà la vraie différence de {topic}.',
  ],
  cta: 'Abonnez-vous pour en savoir plus sur {topic}.',
  ctaExtra: ["Enregistrez cette vidéo pour ne pas l'oublier.", "Partagez-la avec quelqu'un qui en a besoin."],
  slideHook: 'Faites défiler pour découvrir pourquoi.',
  slideHeadings: [
    "Pourquoi c'est important",
    'Ce que vous obtenez',
    'Comment ça marche',
    'Les détails',
    'Bon à savoir',
    "Ce qu'on adore",
    'La différence',
    'En résumé',
  ],
  slideCtaHeading: 'Prêt à essayer {topic} ?',
  slideCtaBody: 'Abonnez-vous pour plus de contenu et enregistrez ce post.',
};

const de: LanguagePack = {
  code: 'de',
  name: 'German',
  stop: '.',
  about: ['über'],
  hooks: [
    'Das verrät dir niemand über {topic}.',
    'Hör auf zu scrollen, wenn dir {topic} wichtig ist.',
    'Das solltest du über {topic} wissen.',
  ],
  hookExtra: ['Bleib bis zum Ende dran.'],
  leads: ['Hier ist der Grund.', 'Eins nach dem anderen.', 'Und es gibt noch mehr.', 'Jetzt kommt das Beste.', 'Und zum Schluss.'],
  fillers: [
    'Mit {topic} sparst du jeden Tag Zeit.',
    'Viele übersehen {topic}, und das ist ein Fehler.',
    'Wer {topic} einmal ausprobiert, will nicht mehr zurück.',
    'Die Ergebnisse mit {topic} sprechen für sich.',
    'Anfänger und Profis profitieren gleichermaßen von {topic}.',
    'Der Einstieg in {topic} dauert nur ein paar Minuten.',
    'Wer zu {topic} gewechselt hat, bereut es nicht.',
    'Der Alltag wird mit {topic} einfacher.',
    'Die Details machen {topic} besonders.',
    'Für {topic} brauchst du kein großes Budget.',
    'Kleine Schritte mit {topic} summieren sich schnell.',
    'Das ist der echte Unterschied von {topic}.',
  ],
  cta: 'Folge für mehr über {topic}.',
  ctaExtra: ['Speichere dieses Video, damit du es nicht vergisst.', 'Teile es mit jemandem, der es braucht.'],
  slideHook: 'Wische weiter und erfahre, warum.',
  slideHeadings: [
    'Warum es zählt',
    'Was du bekommst',
    'So funktioniert es',
    'Die Details',
    'Gut zu wissen',
    'Was alle lieben',
    'Der Unterschied',
    'Das Fazit',
  ],
  slideCtaHeading: 'Bereit für {topic}?',
  slideCtaBody: 'Folge uns für mehr und speichere diesen Beitrag.',
};

const pt: LanguagePack = {
  code: 'pt',
  name: 'Portuguese',
  stop: '.',
  about: ['sobre'],
  hooks: [
    'Isto é o que ninguém te conta sobre {topic}.',
    'Pare de rolar se você se importa com {topic}.',
    'Você vai querer saber isto sobre {topic}.',
  ],
  hookExtra: ['Fica comigo até o final.'],
  leads: ['Vou te mostrar por quê.', 'Primeiro o mais importante.', 'E tem mais.', 'Agora vem a melhor parte.', 'E por fim.'],
  fillers: [
    'Você economiza tempo todos os dias com {topic}.',
    'Muita gente ignora {topic}, e isso é um erro.',
    'Depois de experimentar {topic}, é difícil voltar atrás.',
    'Os resultados com {topic} falam por si.',
    'Iniciantes e especialistas aproveitam {topic}.',
    'Bastam alguns minutos para começar com {topic}.',
    'Quem mudou para {topic} não se arrepende.',
    'O dia a dia fica mais simples com {topic}.',
    'São os detalhes que fazem {topic} se destacar.',
    'Você não precisa de um grande orçamento para aproveitar {topic}.',
    'Pequenas mudanças com {topic} fazem diferença rápido.',
    'Essa é a verdadeira diferença de {topic}.',
  ],
  cta: 'Siga para mais sobre {topic}.',
  ctaExtra: ['Salve este vídeo para não esquecer.', 'Compartilhe com alguém que precisa ouvir isso.'],
  slideHook: 'Arraste para descobrir por quê.',
  slideHeadings: [
    'Por que importa',
    'O que você ganha',
    'Como funciona',
    'Os detalhes',
    'Bom saber',
    'O que todos amam',
    'A diferença',
    'Resumindo',
  ],
  slideCtaHeading: 'Pronto para experimentar {topic}?',
  slideCtaBody: 'Siga para mais e salve este post.',
};

const it: LanguagePack = {
  code: 'it',
  name: 'Italian',
  stop: '.',
  about: ['su', 'sul', 'sulla', 'riguardo'],
  hooks: ['Ecco cosa nessuno ti dice su {topic}.', 'Smetti di scorrere se ti interessa {topic}.', 'Vorrai sapere questo su {topic}.'],
  hookExtra: ['Resta con me fino alla fine.'],
  leads: ['Ecco perché.', "Partiamo dall'inizio.", 'E non è tutto.', 'Ora la parte migliore.', 'E infine.'],
  fillers: [
    'Con {topic} risparmi tempo ogni giorno.',
    'Molti trascurano {topic}, ed è un errore.',
    'Una volta provato {topic}, è difficile tornare indietro.',
    'I risultati con {topic} parlano da soli.',
    'Principianti ed esperti traggono vantaggio da {topic}.',
    'Bastano pochi minuti per iniziare con {topic}.',
    'Chi è passato a {topic} non se ne pente.',
    'La vita di tutti i giorni è più semplice con {topic}.',
    'Sono i dettagli a rendere speciale {topic}.',
    'Non serve un grande budget per goderti {topic}.',
    'Piccoli cambiamenti con {topic} fanno subito la differenza.',
    'Questa è la vera differenza di {topic}.',
  ],
  cta: 'Seguimi per altri contenuti su {topic}.',
  ctaExtra: ['Salva questo video per non dimenticarlo.', 'Condividilo con chi ne ha bisogno.'],
  slideHook: 'Scorri per scoprire perché.',
  slideHeadings: [
    'Perché conta',
    'Cosa ottieni',
    'Come funziona',
    'I dettagli',
    'Buono a sapersi',
    'Cosa piace di più',
    'La differenza',
    'In sintesi',
  ],
  slideCtaHeading: 'Pronto a provare {topic}?',
  slideCtaBody: 'Seguici per altri contenuti e salva questo post.',
};

const hi: LanguagePack = {
  code: 'hi',
  name: 'Hindi',
  stop: '।',
  about: [],
  hooks: [
    '{topic} के बारे में यह बात कोई नहीं बताता।',
    'अगर आपको {topic} की परवाह है तो स्क्रॉल करना बंद करें।',
    '{topic} के बारे में आप यह ज़रूर जानना चाहेंगे।',
  ],
  hookExtra: ['आख़िर तक देखिए।'],
  leads: ['इसकी वजह यह है।', 'सबसे पहले।', 'और भी है।', 'अब सबसे अच्छी बात।', 'और आख़िर में।'],
  fillers: [
    '{topic} के साथ आप हर दिन समय बचाते हैं।',
    'बहुत से लोग {topic} को नज़रअंदाज़ करते हैं, और यह एक गलती है।',
    'एक बार {topic} आज़माने के बाद पीछे लौटना मुश्किल है।',
    '{topic} के नतीजे खुद बोलते हैं।',
    'नए और अनुभवी, दोनों को {topic} से फ़ायदा होता है।',
    '{topic} शुरू करने में बस कुछ मिनट लगते हैं।',
    'जिन्होंने {topic} अपनाया, उन्हें कोई पछतावा नहीं।',
    '{topic} के साथ रोज़मर्रा की ज़िंदगी आसान हो जाती है।',
    'छोटी-छोटी बातें ही {topic} को ख़ास बनाती हैं।',
    '{topic} के लिए बड़े बजट की ज़रूरत नहीं है।',
    '{topic} के साथ छोटे बदलाव जल्दी असर दिखाते हैं।',
    'यही {topic} का असली फ़र्क है।',
  ],
  cta: '{topic} के बारे में और जानने के लिए फ़ॉलो करें।',
  ctaExtra: ['इस वीडियो को सेव करें ताकि आप भूलें नहीं।', 'इसे किसी ऐसे व्यक्ति के साथ शेयर करें जिसे इसकी ज़रूरत है।'],
  slideHook: 'क्यों, यह जानने के लिए स्वाइप करें।',
  slideHeadings: ['यह क्यों ज़रूरी है', 'आपको क्या मिलता है', 'यह कैसे काम करता है', 'विवरण', 'जानने लायक', 'लोगों को क्या पसंद है', 'फ़र्क', 'निष्कर्ष'],
  slideCtaHeading: '{topic} आज़माने के लिए तैयार हैं?',
  slideCtaBody: 'और जानकारी के लिए फ़ॉलो करें और इस पोस्ट को सेव करें।',
};

export const PACKS: Record<string, LanguagePack> = { en, es, fr, de, pt, it, hi };

/** Names of each language as a client may send them (English, the language's own, a few neighbours'). */
const NAMES: Record<string, string[]> = {
  en: ['english', 'inglés', 'ingles', 'anglais', 'englisch', 'inglese', 'inglês', 'अंग्रेज़ी', 'अंग्रेजी'],
  es: ['spanish', 'español', 'espanol', 'castellano', 'espagnol', 'spanisch', 'spagnolo', 'espanhol', 'castilian'],
  fr: ['french', 'français', 'francais', 'francés', 'frances', 'französisch', 'francese', 'francês'],
  de: ['german', 'deutsch', 'alemán', 'aleman', 'allemand', 'tedesco', 'alemão'],
  pt: [
    'portuguese',
    'português',
    'portugues',
    'portugais',
    'portugiesisch',
    'portoghese',
    'portugués',
    'brazilian portuguese',
    'português brasileiro',
  ],
  it: ['italian', 'italiano', 'italien', 'italienisch'],
  hi: ['hindi', 'हिन्दी', 'हिंदी'],
};

const BY_NAME = new Map<string, string>();
for (const [code, names] of Object.entries(NAMES)) for (const n of names) BY_NAME.set(n, code);

/**
 * The language code (`en`, `es`, `fr`, `de`, `pt`, `it`, `hi`) the writer uses for a client's
 * `language` (a name such as "Spanish" or "Deutsch", a code such as "es", or a locale such as
 * "es-MX" / "pt_BR"), or undefined when it cannot write that language (the API answers 400
 * naming `language`).
 */
export function supportedWriterLanguage(language: string): string | undefined {
  const v = language.trim().toLowerCase().replace(/\s+/g, ' ');
  if (!v || v.length > 64) return undefined;
  const named = BY_NAME.get(v);
  if (named) return named;
  const locale = /^([a-z]{2,3})(?:[-_][a-z0-9]{1,8})*$/.exec(v);
  if (locale && PACKS[locale[1]]) return locale[1];
  return undefined;
}

export function languagePack(language: string): LanguagePack | undefined {
  const code = supportedWriterLanguage(language);
  return code ? PACKS[code] : undefined;
}

/**
 * What the local writer needs to read a brief in each language and to keep a count it announces:
 * the question words and copulas of "Why X is Y" (the subject is X, the claim "X is Y"), the
 * number words 0–10, the nouns of a list ("three reasons", "five tips"), the sentence that
 * announces the list ({list}: the count, its noun and what follows, as the brief says it) and the
 * sentence that opens each item (index 0 is item one).
 */
export interface BriefWords {
  questions: string[];
  copulas: string[];
  numbers: string[];
  listNouns: string[];
  listHook: string;
  items: string[];
  /** Short whole sentences about the subject, for scripts of a few seconds. */
  short: string[];
  /** Their on-screen titles, in the same order; else a phrase of each. */
  shortTitles?: string[];
}

export const BRIEF_WORDS: Record<string, BriefWords> = {
  en: {
    questions: ['why', 'how', 'what'],
    copulas: ['is', 'are'],
    numbers: ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'],
    listNouns:
      'reasons tips ways facts things steps habits mistakes ideas secrets signs rules benefits myths questions lessons tricks hacks'.split(
        ' ',
      ),
    listHook: 'Here are {list}.',
    short: ['{topic} matters.', 'Try {topic}.', '{topic} just works.'],
    shortTitles: ['Why it matters', 'Try it today', 'It just works'],
    items: [
      'Number one.',
      'Number two.',
      'Number three.',
      'Number four.',
      'Number five.',
      'Number six.',
      'Number seven.',
      'Number eight.',
      'Number nine.',
      'Number ten.',
    ],
  },
  es: {
    questions: ['por qué', 'cómo', 'qué'],
    copulas: ['es', 'son'],
    numbers: ['cero', 'uno', 'dos', 'tres', 'cuatro', 'cinco', 'seis', 'siete', 'ocho', 'nueve', 'diez'],
    listNouns: 'razones motivos consejos formas maneras datos cosas pasos hábitos errores ideas secretos beneficios trucos'.split(' '),
    listHook: 'Aquí tienes {list}.',
    short: ['{topic} vale la pena.', 'Prueba {topic}.', '{topic} marca la diferencia.'],
    items: [
      'Número uno.',
      'Número dos.',
      'Número tres.',
      'Número cuatro.',
      'Número cinco.',
      'Número seis.',
      'Número siete.',
      'Número ocho.',
      'Número nueve.',
      'Número diez.',
    ],
  },
  fr: {
    questions: ['pourquoi', 'comment'],
    copulas: ['est', 'sont'],
    numbers: ['zéro', 'un', 'deux', 'trois', 'quatre', 'cinq', 'six', 'sept', 'huit', 'neuf', 'dix'],
    listNouns: 'raisons conseils façons astuces faits choses étapes habitudes erreurs idées secrets bienfaits'.split(' '),
    listHook: 'Voici {list}.',
    short: ['{topic} en vaut la peine.', 'Essayez {topic}.', '{topic} change tout.'],
    items: [
      'Numéro un.',
      'Numéro deux.',
      'Numéro trois.',
      'Numéro quatre.',
      'Numéro cinq.',
      'Numéro six.',
      'Numéro sept.',
      'Numéro huit.',
      'Numéro neuf.',
      'Numéro dix.',
    ],
  },
  de: {
    questions: ['warum', 'wieso', 'wie'],
    copulas: ['ist', 'sind'],
    numbers: ['null', 'eins', 'zwei', 'drei', 'vier', 'fünf', 'sechs', 'sieben', 'acht', 'neun', 'zehn'],
    listNouns: 'gründe tipps wege fakten dinge schritte gewohnheiten fehler ideen geheimnisse vorteile tricks'.split(' '),
    listHook: 'Hier sind {list}.',
    short: ['{topic} lohnt sich.', 'Probier {topic} aus.', '{topic} macht den Unterschied.'],
    items: [
      'Nummer eins.',
      'Nummer zwei.',
      'Nummer drei.',
      'Nummer vier.',
      'Nummer fünf.',
      'Nummer sechs.',
      'Nummer sieben.',
      'Nummer acht.',
      'Nummer neun.',
      'Nummer zehn.',
    ],
  },
  pt: {
    questions: ['por que', 'porque', 'como'],
    copulas: ['é', 'são'],
    numbers: ['zero', 'um', 'dois', 'três', 'quatro', 'cinco', 'seis', 'sete', 'oito', 'nove', 'dez'],
    listNouns: 'razões motivos dicas formas maneiras fatos coisas passos hábitos erros ideias segredos benefícios truques'.split(' '),
    listHook: 'Aqui vão {list}.',
    short: ['{topic} vale a pena.', 'Experimente {topic}.', '{topic} faz a diferença.'],
    items: [
      'Número um.',
      'Número dois.',
      'Número três.',
      'Número quatro.',
      'Número cinco.',
      'Número seis.',
      'Número sete.',
      'Número oito.',
      'Número nove.',
      'Número dez.',
    ],
  },
  it: {
    questions: ['perché', 'come'],
    copulas: ['è', 'sono'],
    numbers: ['zero', 'uno', 'due', 'tre', 'quattro', 'cinque', 'sei', 'sette', 'otto', 'nove', 'dieci'],
    listNouns: 'motivi ragioni consigli modi fatti cose passi abitudini errori idee segreti benefici trucchi'.split(' '),
    listHook: 'Ecco {list}.',
    short: ['{topic} vale la pena.', 'Prova {topic}.', '{topic} fa la differenza.'],
    items: [
      'Numero uno.',
      'Numero due.',
      'Numero tre.',
      'Numero quattro.',
      'Numero cinque.',
      'Numero sei.',
      'Numero sette.',
      'Numero otto.',
      'Numero nove.',
      'Numero dieci.',
    ],
  },
  hi: {
    questions: [],
    copulas: [],
    numbers: ['शून्य', 'एक', 'दो', 'तीन', 'चार', 'पाँच', 'छह', 'सात', 'आठ', 'नौ', 'दस'],
    listNouns: ['कारण', 'टिप्स', 'तरीके', 'बातें', 'आदतें', 'गलतियाँ'],
    listHook: 'ये रहे {list}।',
    short: ['{topic} आज़माएँ।', '{topic} से फ़र्क पड़ता है।', '{topic} काम का है।'],
    items: ['नंबर एक।', 'नंबर दो।', 'नंबर तीन।', 'नंबर चार।', 'नंबर पाँच।', 'नंबर छह।', 'नंबर सात।', 'नंबर आठ।', 'नंबर नौ।', 'नंबर दस।'],
  },
};
